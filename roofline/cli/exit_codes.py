"""The one exit-code table of every `roofline` command (each --help ends with it; roofline/cli/common.py
`fail` applies it). Imports nothing, so `roofline --help` stays light."""

EXIT_CODES = """\b
Exit codes (every roofline command):
  0      done; compare's gate passed
  1      a finding: compare's gate failed, check disagreed, validate called a
         probe wrong, doctor found profiling cannot work here (a CPU analysis
         environment is 0); or a capture or tool that failed (its own lines)
  2      a usage or input error: an option, a path, a file that cannot be read
         or is refused, an output that exists (pass --force), a command
         that needs torch and triton where they are not installed
  128+N  stopped by signal N: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (what was
         captured is kept)"""
