"""Render results (text tables, markdown). Computes nothing."""
