"""GPU specs, ceilings, analytic floors and verdicts. Takes tables and specs, not files."""
