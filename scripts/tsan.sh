#!/usr/bin/env bash
# Runs the emulated GPU's kernels under ThreadSanitizer: every CUDA module the tests compile for the host
# emulation (tests/emulation/) is built with -fsanitize=thread, each thread of a block is a TSan fiber, and
# __syncthreads() and the warp intrinsics are its only happens-before edges (cuda_host.h). Two threads of a
# block touching the same shared or global memory without a barrier between them, one of them writing, is
# reported as a data race naming the kernel and both accesses, whatever order the threads ran in.
#
# opforge._C and CPython are not instrumented: the TSan runtime is LD_PRELOADed into the interpreter and
# reports only accesses of the instrumented kernels (ignore_noninstrumented_modules). UCX's memory hooks
# (loaded with mpi4py's MPICH) crash under the preloaded runtime at thread exit, so they are turned off.
#
#   scripts/tsan.sh                     # tests/test_emulation.py, then the block-level kernels of the GPU sweep
#   scripts/tsan.sh tests/test_gpu.py -k Softmax     # pytest arguments pass through (one run)
#
# tests/test_emulation.py has two kernels that race on purpose (RacySum, MissingBarrier): the first run
# must report them (proof that TSan follows the fibers) and nothing else. Exit status: 0 when every race
# found is one of those, both were found and the tests passed, 1 otherwise. Reports are kept under build/tsan/.
# Environment: PYTHON (default: python, an interpreter binary of the venv with opforge installed, not a
# pyenv shim, which is a shell script that does not survive the preloaded runtime); CXX (default g++).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
CXX=${CXX:-g++}
PYTHON=$("${PYTHON:-python}" -c 'import sys; print(sys.executable)')
LIBTSAN=$("$CXX" -print-file-name=libtsan.so)
if [[ "$LIBTSAN" != /* || ! -e "$LIBTSAN" ]]; then
  echo "tsan.sh: $CXX has no ThreadSanitizer runtime ($LIBTSAN); install libtsan" >&2
  exit 2
fi
OUT=$ROOT/build/tsan
rm -rf "$OUT"
mkdir -p "$OUT"

# The kernels with barriers, warp intrinsics or shared memory (GPU sweep records of their operators).
BLOCK_KERNELS="GPU and (ReduceSum or ReduceMean or ReduceMax or ReduceMin or ReduceProd or Argmax or Argmin
  or Softmax or LogSoftmax or CumSum or CumProd or Sort or TopK or LayerNorm or BatchNorm or L2Loss
  or SoftmaxCrossEntropyWithLogits or NLLLoss or BCEWithLogitsLoss)"
EXPECTED="RacySum MissingBarrier"

failed=0
run() {  # run <name> <pytest arguments...>
  local name=$1
  shift
  echo "== $name: pytest $*"
  local start=$SECONDS status
  set +e
  UCX_MEM_EVENTS=no UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none \
    OPF_EMU_CXXFLAGS="-fsanitize=thread -g" LD_PRELOAD="$LIBTSAN${LD_PRELOAD:+ $LD_PRELOAD}" \
    TSAN_OPTIONS="ignore_noninstrumented_modules=1:halt_on_error=0:report_signal_unsafe=0:log_path=$OUT/$name" \
    "$PYTHON" -m pytest -p no:cacheprovider -n 0 -q "$@" >"$OUT/$name.pytest.log" 2>&1
  status=$?
  set -e
  tail -n 3 "$OUT/$name.pytest.log"
  echo "== $name: pytest exit status $status in $((SECONDS - start)) s (66: TSan reported)"
  # TSan's exit code (66) replaces pytest's: failures are read from the log.
  if [[ $status -ne 0 && $status -ne 66 ]] || grep -q -E "^(FAILED|ERROR) " "$OUT/$name.pytest.log"; then
    echo "tsan.sh: the $name run failed or crashed (see $OUT/$name.pytest.log)" >&2
    failed=1
  fi
}

if [[ $# -gt 0 ]]; then
  run custom "$@"
else
  run emulation tests/test_emulation.py
  run sweep tests/test_op_sweep.py -k "$(echo $BLOCK_KERNELS)"
fi

# Each report's first frame of each of its two accesses: the kernels (or helpers) that raced.
shopt -s nullglob
reports=("$OUT"/*.[0-9]*)
races=$(cat /dev/null "${reports[@]}" | grep -c "WARNING: ThreadSanitizer" || true)
echo "== $races ThreadSanitizer report(s) (in $OUT)"
frames=$(for f in "${reports[@]}"; do
  awk '/^  (Write|Read|Atomic|Previous)/ {getline; sub(/^ *#0 /, ""); sub(/ .*/, ""); print}' "$f"
done | sort | uniq -c | sort -rn)
[[ -n "$frames" ]] && echo "$frames"

status=$failed
for kernel in $EXPECTED; do
  if [[ $# -eq 0 ]] && ! grep -q "$kernel" <<<"$frames"; then
    echo "tsan.sh: the deliberate race of $kernel was not reported: TSan does not see the fibers" >&2
    status=1
  fi
done
unexpected=$(grep -v -E "$(echo $EXPECTED | tr ' ' '|')" <<<"$frames" || true)
if [[ -n "$unexpected" ]]; then
  echo "tsan.sh: races outside the deliberately racy test kernels:" >&2
  echo "$unexpected" >&2
  status=1
fi
echo "== tsan.sh exit status $status"
exit $status
