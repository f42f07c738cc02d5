#!/usr/bin/env bash
# The README's main job: set up, then profile triton_mla at 128k where there is a GPU and
# ncu, else analyze the bundled H200 capture. Extra arguments go to `roofline profile`.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv --system-site-packages .venv   # a GPU box's own torch/triton stay visible
. .venv/bin/activate
python -m pip install -q -e .
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 \
   && python -c "import torch, triton; assert torch.cuda.is_available()" 2>/dev/null; then
  roofline profile --kernel triton_mla --ctx 128k "$@"
else
  echo "no usable GPU here: analyzing the bundled H200 capture instead" >&2
  roofline analyze
fi
