#!/usr/bin/env bash
# Installs every Debian package linsweep needs to build, test and run; idempotent (does
# nothing when all are present). Needs root or sudo. Knows Debian 12 (bookworm) and Debian 13
# (trixie), which name two packages differently (scripts/debian_release.sh); any other release
# stops here with its name unless LINSWEEP_DEBIAN_RELEASE names one of those two.
# Usage: setup.sh [--demo]   (--demo: only what building and running the demo needs, without
# the Python references and Slurm that the tests use)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/debian_release.sh"
release="$(debian_release)" || exit 2
clang_version="$(release_clang_version "$release")"
demo_only=0
[[ "${1:-}" == "--demo" ]] && demo_only=1
packages=(
  build-essential cmake ninja-build ccache pkg-config git
  lld                                          # the linker (cmake/fast_linker.cmake; bench/linkers.sh)
  libtorch-dev libopenblas0-pthread            # LibTorch (CPU); OpenBLAS, or GEMMs run ~50x slower
  libopenmpi-dev openmpi-bin                   # MPI coordinator and CPU all-reduce
  libhdf5-dev hdf5-tools zlib1g-dev            # stores; zlib for the unit-file seal
  libssl-dev                                   # SHA-256 of inputs (OpenSSL's EVP digests)
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libicu-dev libfmt-dev libcsv-dev catch2
  libsentencepiece-dev                         # tokenizer.model files (Llama 2, Mistral, Gemma)
  nodejs npm                                   # fetches the demo's data and GPT-2's tokenizer (npm)
)
if [[ $demo_only -eq 0 ]]; then
  packages+=(
    python3-torch python3-numpy python3-h5py   # independent references for tests and bench/
    python3-pandas python3-pip python3-venv    # python/linsweep_store (the store reader), its tests, pip install
    python3-setuptools                         # its build backend (Debian 13's pip no longer pulls it in)
    python3-sklearn python3-scipy              # gate, PCA, k-means, AUC and Pearson references
    python3-sentencepiece python3-regex        # tokenizer references: SentencePiece itself, \p{L} regexes
    slurm-wlm munge                            # Slurm integration tests: clusters on this host
    iproute2                                   # their nodes' network (scripts/slurm_cluster.sh)
    e2fsprogs                                  # chattr (fault injection); in Debian 13's minimal system no more
    chromium                                   # the report in a real browser (tests/presentation/browser_test.sh)
    # scripts/fuzz.sh: libFuzzer with ASan and UBSan, the release's clang (14 on bookworm, 19 on trixie)
    "clang-$clang_version" "libclang-rt-$clang_version-dev"
    "clang-format-$clang_version"              # scripts/check_format.sh (checks with 14 only)
  )
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm may come from elsewhere (e.g. a Node.js install); do not fight it.
if command -v npm >/dev/null 2>&1; then
  missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
  read -r -a missing <<<"${missing[*]}"
fi
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# LibTorch links the generic libblas.so.3: make sure OpenBLAS provides it.
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)
if [[ -n "$blas" && "$blas" != *openblas* ]]; then
  echo "setup: warning: libblas.so.3 resolves to $blas, not OpenBLAS; matrix products will be slow" >&2
fi
