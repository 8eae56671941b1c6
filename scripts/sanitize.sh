#!/usr/bin/env bash
# Builds opforge._C with AddressSanitizer + UndefinedBehaviorSanitizer and runs the test suite on it (the
# GPU tests' emulated kernels compiled with both too).
#
# The build has its own virtual environment and build directory (under build/, ignored by git), so
# the normal install is untouched: an editable install there maps `opforge` to this checkout and
# `opforge._C` to the sanitized extension. CPython is not instrumented, so GCC's sanitizer runtimes
# are LD_PRELOADed; leak detection is off (CPython keeps memory until exit by design).
#
#   scripts/sanitize.sh                 # build (or reuse) and run the whole suite
#   scripts/sanitize.sh tests/test_native_safety.py -k fork    # pytest arguments pass through
#
# Environment: PYTHON (the interpreter for the venv, default python3), OPFORGE_SANITIZE_VENV (default
# build/sanitize-venv), OPFORGE_SANITIZE_REBUILD=1 to reinstall after C++ edits.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-python3}
VENV=${OPFORGE_SANITIZE_VENV:-$ROOT/build/sanitize-venv}
BUILD_DIR=build/sanitize  # relative to the project, as scikit-build-core wants
CXX=${CXX:-g++}

if ! command -v "$CXX" >/dev/null; then
  echo "sanitize.sh: no C++ compiler '$CXX'" >&2
  exit 2
fi
LIBASAN=$("$CXX" -print-file-name=libasan.so)
LIBUBSAN=$("$CXX" -print-file-name=libubsan.so)
for lib in "$LIBASAN" "$LIBUBSAN"; do
  if [[ "$lib" != /* || ! -e "$lib" ]]; then
    echo "sanitize.sh: $CXX has no sanitizer runtime ($lib); install libasan and libubsan" >&2
    exit 2
  fi
done

if [[ ! -x "$VENV/bin/python" ]]; then
  echo "== creating $VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  OPFORGE_SANITIZE_REBUILD=1
fi
if [[ "${OPFORGE_SANITIZE_REBUILD:-0}" == 1 ]] || ! "$VENV/bin/python" -c "import opforge._C" 2>/dev/null; then
  echo "== building opforge._C with -fsanitize=address,undefined into $BUILD_DIR"
  start=$SECONDS
  "$VENV/bin/pip" install -q scikit-build-core pybind11
  # The same compiler as the preloaded runtimes, so the instrumented code matches them.
  # RelWithDebInfo and no strip: reports name files and lines.
  CXX="$CXX" "$VENV/bin/pip" install -q --no-build-isolation -e ".[test,dist]" \
    --config-settings=build-dir="$BUILD_DIR" \
    --config-settings=cmake.build-type=RelWithDebInfo \
    --config-settings=install.strip=false \
    --config-settings=cmake.define.OPFORGE_SANITIZE=ON
  echo "== built in $((SECONDS - start)) s"
fi

export LD_PRELOAD="$LIBASAN $LIBUBSAN${LD_PRELOAD:+ $LD_PRELOAD}"
# The emulated GPU's kernels (tests/emulation/, compiled as the tests first launch them) get the same
# sanitizers: a CUDA kernel reading or writing past an array, which on a GPU reads garbage or faults, is
# reported with its source line.
export OPF_EMU_CXXFLAGS=${OPF_EMU_CXXFLAGS:-"-fsanitize=address,undefined -fno-omit-frame-pointer -g"}
# allocator_may_return_null: a huge request is a MemoryError, as without ASan.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1:abort_on_error=1:print_summary=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

echo "== running the tests under ASan + UBSan"
start=$SECONDS
set +e
# --capture=sys: a sanitizer writes its report to file descriptor 2 and ends the process; pytest's
# default (fd) capture would swallow the report with the test's output.
"$VENV/bin/python" -m pytest -p no:cacheprovider --capture=sys "$@"  # pyproject adds -q
status=$?
set -e
echo "== tests finished in $((SECONDS - start)) s with exit status $status"
exit $status
