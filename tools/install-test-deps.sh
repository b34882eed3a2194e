#!/usr/bin/env bash
# Installs everything the tests use beyond `pip install -e '.[dev]'`, so that none of them skips:
# the Debian 12 packages of tools/test-deps.txt (HIP compiler and libraries, Chromium, CMake, make,
# git), the headers of the ROCm libraries Debian 12 lacks (from Debian 13 packages) and the CUDA
# library headers the CUDA toolkit lacks (from NVIDIA's PyPI wheels), the clang headers of newer
# Debian hipcc releases, HIPIFY's API tables (Debian's hipify source package) and Microsoft's SARIF
# Multitool (npm), all under .cache/; and the HIP 7.2 and 6.4 syntax-check compilers, under
# ${CUDA2HIP_HIP_TOOLCHAINS:-${XDG_CACHE_HOME:-~/.cache}/cuda2hip/hip-toolchains} (about 300 MB each).
# Debian 12 / Ubuntu; as root, or through sudo. .ci/run calls it too, so the two never drift.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=()
[[ $(id -u) == 0 ]] || sudo=(sudo)
mapfile -t packages < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' tools/test-deps.txt | awk '{print $1}')
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${packages[@]}" >/dev/null

bash tests/harness/fetch_rocm_library_headers.sh .cache/rocm-library-headers
python3 tests/harness/fetch_cuda_library_headers.py .cache/cuda-library-headers
# The clang headers of Debian trixie's, sid's and experimental's hipcc (clang 17, 21, 22): with the HIP headers of those
# releases, tools/generate_hip_forms.py reads which device functions each HIP release declares.
python3 tests/harness/fetch_hip_compiler_headers.py .cache/hip-compiler-headers ||
  echo "warning: no hipcc clang headers fetched; the forms data is checked against the installed HIP 5.2 only" >&2
# The HIP 7.2 and 6.4 syntax-check compilers (Debian's packages, unpacked; reused when present): the
# compile tests and bench/real_world.py build at those releases too. A release that cannot be had
# leaves its tests skipping with the reason.
python3 tests/harness/fetch_hip_toolchain.py ||
  echo "warning: a HIP toolchain could not be fetched; its compile tests skip (python3 tests/harness/hip_toolchains.py says why)" >&2
# HIPIFY's API tables, the input of tools/generate_rule_data.py and `cuda2hip coverage --tables`.
python3 tests/harness/fetch_hipify_tables.py .cache/hipify-tables
# The SARIF validator (and the SARIF 2.1.0 schema) the SARIF report tests check the output with.
python3 tests/harness/fetch_sarif_multitool.py .cache/sarif-multitool
