#!/usr/bin/env bash
# The README's main job: set up, then profile triton_mla at 128k where there is a GPU and ncu,
# else analyze the bundled H200 capture (saying why). Extra arguments go to `roofline profile`.
#
# Where it installs: into the active environment when that is a venv or conda env that already
# holds torch (only the missing light dependencies are added, nothing of torch/triton is touched);
# otherwise into its own venv, $ROOFLINE_VENV (default .venv), with --system-site-packages.
# Offline (a GPU box without internet): put the wheels it lacks in .whl/ or point $ROOFLINE_WHEELS at a
# folder of them; pip then installs from there only (--no-index). Nsight Compute's own ncu_report (its
# extras/python) stands in for the ncu-report wheel.
# ROOFLINE_WHEELS=- uses the package index even where .whl/ exists.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "quickstart: $*" >&2; }

wheels=${ROOFLINE_WHEELS:-}
if [ -z "$wheels" ] && [ -d .whl ]; then wheels=.whl; fi
[ "$wheels" = - ] && wheels=
pip_from=()
if [ -n "$wheels" ]; then
  [ -d "$wheels" ] || { say "ROOFLINE_WHEELS=$wheels is not a folder"; exit 1; }
  pip_from=(--no-index --find-links "$wheels")
  say "installing only from the wheels in $wheels (no package index)"
fi

decision=$(python3 tools/quickstart_env.py where)
where=${decision%% *} why=${decision#* }
say "$why"
if [ "$where" = active ]; then
  PY=$(python3 -c 'import sys; print(sys.executable)')
  need_pip() {
    "$PY" -m pip --version >/dev/null 2>&1 || "$PY" -m ensurepip -q >/dev/null 2>&1 \
      || { say "$PY has no pip and ensurepip failed: install pip into that environment first"; exit 1; }
  }
  lacking=()
  while IFS= read -r req; do [ -n "$req" ] && lacking+=("$req"); done < <("$PY" tools/quickstart_env.py missing)
  if [ "${#lacking[@]}" -gt 0 ]; then
    need_pip
    say "adding what this environment lacks: ${lacking[*]}"
    "$PY" -m pip install -q "${pip_from[@]}" "${lacking[@]}" \
      || { say "could not install ${lacking[*]}${wheels:+ from $wheels}: put their wheels there (or go online) and rerun"; exit 1; }
  fi
  gpu_ok=0; blocker=$("$PY" tools/quickstart_env.py gpu) || gpu_ok=$?
  # roofline itself is installed (editable) while the main job runs from this checkout; waited for below
  installing=
  if "$PY" tools/quickstart_env.py current >/dev/null; then
    say "roofline from this checkout is installed here already"
  else
    need_pip
    install_log=$(mktemp)
    "$PY" -m pip install -q --no-deps --no-build-isolation -e . > "$install_log" 2>&1 &
    installing=$!
  fi
else
  venv=${ROOFLINE_VENV:-.venv}
  python3 -m venv --system-site-packages "$venv"
  PY=$venv/bin/python
  "$PY" -m pip install -q "${pip_from[@]}" -e .
  gpu_ok=0; blocker=$("$PY" tools/quickstart_env.py gpu) || gpu_ok=$?
fi

status=0
if [ "$gpu_ok" = 0 ]; then
  "$PY" -m roofline profile --kernel triton_mla --ctx 128k "$@" || status=$?
else
  say "not profiling: $blocker"
  say "analyzing the bundled H200 capture instead (roofline/data/samples/h200-triton_mla-128k)"
  "$PY" -m roofline analyze || status=$?
fi
if [ -n "${installing:-}" ]; then
  if ! wait "$installing"; then
    cat "$install_log" >&2
    say "could not install roofline into $("$PY" -c 'import sys; print(sys.prefix)') (pip's output above)"
    status=1
  fi
  rm -f "$install_log"
fi
# How to reach `roofline` from here on (it lives in the environment chosen above).
bin=$(dirname "$PY")
if [ -n "${VIRTUAL_ENV:-}" ] && [ "$(cd "$VIRTUAL_ENV" && pwd -P)/bin" = "$(cd "$bin" && pwd -P)" ]; then
  say "roofline is installed in the active environment: run \`roofline --help\`"
elif command -v roofline >/dev/null 2>&1 && [ "$(command -v roofline)" -ef "$bin/roofline" ]; then
  say "roofline is on your PATH ($bin/roofline): run \`roofline --help\`"
else
  say "to use roofline: \`source $bin/activate\` (then \`roofline --help\`), or run $bin/roofline directly"
fi
exit $status
