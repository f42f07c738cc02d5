"""The analysis core: one module per question a user asks of loaded evidence (why bound, how far from
the floor, where the warps wait, did it get slower). It reads launch tables and run files; it runs no
tool (no ncu, nsys or profiled child: an import-linter contract keeps it so)."""
