"""The GPU catalogue over kernels/data/hardware.json: each GPU's ceilings (datasheet and measured), its ncu
chip, its architecture's per-SM limits, and the record `roofline calibrate` saves."""
