#!/usr/bin/env bash
# The GPU checks, on a machine with an NVIDIA GPU and CuPy but no network (the `device` tool's):
# build opforge there, then run what only a real GPU can run, most important first, each step under
# its own time limit so that a slow step cannot starve the next:
#   1. the GPU tests, kernels launched from C (the launch and device-graph tests, the registry sweep of
#      every GPU kernel, the bad-input campaign on the GPU's kernels, the GPU, user-CUDA and NVRTC tests,
#      NCCL on a 1-rank communicator and data-parallel training on the GPU: tests/test_gpu_nccl.py),
#   2. `opforge bench --device GPU` (bandwidth vs a device copy, MatMul vs cupy.matmul, host overhead
#      launching from Python and from C, row and layout kernels and training steps vs PyTorch), then the
#      device time of each kernel (scripts/gpu_kernel_times.py),
#   3. `opforge demo --device GPU`: the MLP, LeNet, and the MLP in graph mode (a jitted step on the GPU),
#   4. the whole suite, with the real GPU in place of the host emulation.
# Wheels the machine lacks travel in .whl/ (scipy-openblas32 for the build). Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/gpu_check}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-16}
PY=${PYTHON:-python3}

step() { echo; echo "=== $1 ($(date +%T))"; }

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
$PY -c "import cupy, sys; print('python', sys.version.split()[0], 'cupy', cupy.__version__, 'CUDA runtime', cupy.cuda.runtime.runtimeGetVersion())"

if compgen -G ".whl/*.whl" >/dev/null; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl || exit 1
fi

step "build"
timeout 240 $PY -m pip install -q --no-build-isolation --no-deps -e . >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
$PY -c "import opforge; from opforge.device import get_device; print('GPU device:', get_device('GPU').runtime.device_name)" || exit 1

PYTEST="$PY -m pytest -p no:cacheprovider -o addopts= -q -rf --timeout 180"

step "GPU tests, kernels launched from C"
# (NVRTC's own compile tests run without a GPU, in CI: left out here.) Launches from C (_C.DeviceLaunch,
# cuLaunchKernel) are off by default until this step has passed on a GPU; the whole suite (step 4) runs
# with the default, launching from Python.
# The launch tests first (their names do not say GPU): check steps, GEMM steps, device graphs.
OPFORGE_GPU_NATIVE_LAUNCH=1 timeout ${LAUNCH_TESTS_S:-90} $PYTEST -n ${WORKERS:-14} tests/test_device_launch.py \
  tests/test_device_graph.py 2>&1 | tee "$OUT/launch_tests.log" | tail -20
OPFORGE_GPU_NATIVE_LAUNCH=1 timeout ${GPU_TESTS_S:-200} $PYTEST -n ${WORKERS:-14} -k "(GPU or gpu or cuda or Cuda) and not compile" tests 2>&1 \
  | tee "$OUT/gpu_tests.log" | tail -40

if [ "${DEMO_S:-60}" != 0 ]; then
  step "demo --device GPU"
  for args in "--epochs 5" "--model lenet --epochs 2" "--mode graph --epochs 5"; do
    echo "--- opforge demo --device GPU $args"
    timeout ${DEMO_S:-60} opforge demo --device GPU $args 2>&1 | grep -E "^(opforge|optimizer|epoch|final)|Error"
  done 2>&1 | tee "$OUT/demo.log"
fi

step "bench --device GPU"
timeout ${BENCH_S:-100} opforge bench --device GPU 2>&1 | tee "$OUT/bench_gpu.log"

if [ "${KTIMES_S:-60}" != 0 ]; then
  step "device time per kernel (CUPTI)"
  timeout ${KTIMES_S:-60} $PY scripts/gpu_kernel_times.py 2>&1 | tee "$OUT/kernel_times.log"
fi

if [ "${SUITE_S:-150}" != 0 ]; then
  step "whole suite"
  timeout ${SUITE_S:-150} $PYTEST -n ${WORKERS:-14} tests 2>&1 | tee "$OUT/suite.log" | tail -40
fi
step "done"
