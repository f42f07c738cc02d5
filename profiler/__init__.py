"""Run a workload under Nsight tools in a child process and parse what they write. Knows no rooflines."""
