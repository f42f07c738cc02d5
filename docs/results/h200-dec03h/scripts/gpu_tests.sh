. tests/fixtures/capture/h200_call.sh /tmp/gt
versions
step "GPU tests: the part the last call's timeout cut, and the 64-head ones"
ROOFLINE_GPU_TESTS=1 timeout 170 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_gpu_kernels.py \
  -k "serving_batches or graph_replays or removal or stamps or heads64" 2>&1 | tail -4 | tee $OUT/gpu_tests.txt
