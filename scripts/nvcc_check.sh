#!/usr/bin/env bash
# Compile CUDA sources with nvcc for sm_80 and sm_90, with every template instantiation the registry
# names for them forced (their addresses taken), under -Wall -Wextra with warnings as errors: the host
# compiler's warnings, which NVRTC (tests/test_cuda_compile.py) does not give.
#   bash scripts/nvcc_check.sh [source.cu ...]    (default: every source with registered kernels)
set -euo pipefail
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python - "$out" "$@" <<'PY'
import pathlib, sys
from opforge.tools.cuda_check import kernel_names_by_source
from opforge.kernels.gpu.cuda import include_dirs, source_path
out, wanted = pathlib.Path(sys.argv[1]), set(sys.argv[2:])
for source, names in kernel_names_by_source().items():
    if wanted and source not in wanted:
        continue
    casts = "".join(f"    reinterpret_cast<void*>(&{n}),\n" for n in names)
    text = f'#include "{source_path(source)}"\nvoid* opf_instantiations[] = {{\n{casts}}};\n'
    (out / source).write_text(text)
    (out / (source + ".inc")).write_text(" ".join(f"-I{d}" for d in include_dirs(source)))
PY
status=0
for wrapper in "$out"/*.cu; do
  name=$(basename "$wrapper")
  for arch in 80 90; do
    # shellcheck disable=SC2046
    if nvcc -std=c++17 -c "$wrapper" -o "$out/$name.$arch.o" -arch=sm_$arch $(cat "$wrapper.inc") \
        -Xcompiler -Wall,-Wextra -Werror all-warnings >"$out/$name.$arch.log" 2>&1; then
      echo "ok    $name sm_$arch"
    else
      echo "FAIL  $name sm_$arch"; cat "$out/$name.$arch.log"; status=1
    fi
  done
done
exit $status
