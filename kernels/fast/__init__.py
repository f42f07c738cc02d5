"""triton_mla_fast, the verify kernel a performance engineer would write: every query row of a
request shares each KV tile, the prefix split to fill the GPU, the splits merged by LSE.

- common.py: its frozen launch config (`FastConfig`) and where the values come from
- paths.py: one object per split kernel (checks a config, plans rows, gives its launch spec,
  launches), `plan_fast` / `fast_specs` (plain Python: no torch, no triton)
- run.py: the registered `triton_mla_fast` and `triton_mla_fast_graph`
- portable.py, hopper.py: the Triton kernels; gluon.py: what the Gluon kernels share, program.py:
  their programs' start; seesaw.py (with stagger.py), ring.py: the Gluon kernels (sm_90)

Importing this package imports nothing heavy.
"""
