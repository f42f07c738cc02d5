"""Charts of an analysis, one module per chart (roofline, stalls, timeline, waits), each writing PNG and SVG
from loaded results only; common.py holds what they share (matplotlib on first draw, rc, colours, save)."""
