#!/usr/bin/env bash
# Makes the GPU device bundle: the Debian 12 packages that linsweep needs to build and run and
# that a GPU device machine (CUDA LibTorch, CMake and a compiler, but none of these) lacks --
# OpenMPI, HDF5, yaml-cpp, CLI11, nlohmann-json, fmt, libcsv, ICU, Catch2, zlib, OpenSSL, ninja and every
# shared library they need -- downloaded with `apt-get download`, unpacked with `dpkg-deb -x`
# and trimmed (no docs, man pages, Fortran, Java or unused static libraries); plus the fixture
# models, GPT-2's BPE files and env.sh, which points CMake, the
# compiler, the loader and a relocated OpenMPI at it. Packs it as OUTDIR.tar.gz, the form that
# travels to the device (it keeps the tree's symbolic links; about 30 MiB against ~80 MiB of
# files unpacked), and fails when that is over 64 MiB (the device's transfer limit;
# LINSWEEP_BUNDLE_LIMIT_MIB changes it). docs/gpu.md says how to use it.
# Usage: scripts/gpu_bundle.sh OUTDIR
set -euo pipefail

if [[ $# -ne 1 || "$1" == -* ]]; then
  echo "usage: scripts/gpu_bundle.sh OUTDIR" >&2
  exit 2
fi
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)"
limit_mib="${LINSWEEP_BUNDLE_LIMIT_MIB:-64}"
arch=x86_64-linux-gnu
for tool in apt-get dpkg-deb dpkg objdump; do
  command -v "$tool" >/dev/null || { echo "gpu_bundle: $tool not found (run this on Debian 12)" >&2; exit 1; }
done

# What CMakeLists.txt finds (find_package and the plain `csv` link), as Debian 12 packages.
packages=(
  libopenmpi-dev openmpi-bin openmpi-common libopenmpi3  # MPI CXX, mpirun (no hwloc plugins: X11, OpenCL)
  libhdf5-dev libhdf5-103-1                                               # HDF5 C
  zlib1g-dev zlib1g                                                       # ZLIB (unit seal)
  libssl-dev libssl3                                                      # OpenSSL::Crypto (SHA-256 of inputs)
  libyaml-cpp-dev libyaml-cpp0.7 nlohmann-json3-dev libcli11-dev catch2
  libfmt-dev libfmt9 libcsv-dev libcsv3
  libicu-dev libicu72                                                     # ICU uc
  libsentencepiece-dev libsentencepiece0                                  # tokenizer.model files
  ninja-build                                                             # the generator
)
# Libraries every Linux machine with a C++ compiler has; never bundled (a second glibc or
# libstdc++ on LD_LIBRARY_PATH would break the device's own programs).
assumed='^(libc|libm|libdl|libpthread|librt|libutil|libresolv|ld-linux-x86-64|libstdc\+\+|libgcc_s)\.so'

root="$out/root" debs="$out/debs"
rm -rf "$root" "$out/models" "$out/bench" "$out/gpt2-tokenizer"
mkdir -p "$root" "$debs"

fetch() {  # fetch PACKAGE...: downloads (once) and unpacks into $root
  (cd "$debs" && apt-get download -q "$@" >/dev/null 2>"$debs/apt.err") || {
    cat "$debs/apt.err" >&2; echo "gpu_bundle: apt-get download $* failed" >&2; exit 1; }
  for p in "$@"; do
    local deb
    deb=$(compgen -G "$debs/${p}_*.deb" | head -1)
    dpkg-deb -x "$deb" "$root"
  done
}

echo "gpu_bundle: downloading ${#packages[@]} packages into $debs"
rm -f "$debs"/*.deb
fetch "${packages[@]}"
fetched=" ${packages[*]} "
# OpenMPI and PMIx plugins for network fabrics (InfiniBand verbs, UCX, libfabric, PSM) and
# munge authentication: the checks run on one node (shared memory and TCP), and their libraries
# would double the bundle. OpenMPI loads the plugins it finds, so removing them is enough.
fabric='^(libibverbs|libuc[pmst]|libfabric|libpsm|librdmacm|libmunge|libmca_common_(ucx|verbs|ofi))'
while IFS= read -r -d '' c; do
  objdump -p "$c" 2>/dev/null | awk '/^  NEEDED/{print $2}' | grep -Eq "$fabric" && rm -f "$c"
done < <(find "$root" -name 'mca_*.so' -print0)
find "$root" \( -name 'libmca_common_ucx*' -o -name 'libmca_common_verbs*' -o -name 'libmca_common_ofi*' \) -delete

# Close over the shared libraries they need: every NEEDED soname of every ELF file in the tree
# must be in the tree or in $assumed; a missing one is looked up with `dpkg -S` on this machine
# (setup.sh installed them all) and its package fetched, until nothing is missing.
missing_sonames() {
  local needed have
  needed=$(find "$root" -type f \( -name '*.so*' -o -path '*/bin/*' \) -print0 |
    xargs -0 objdump -p 2>/dev/null | awk '/^  NEEDED/{print $2}' | sort -u || true)
  have=$(find "$root" \( -type f -o -type l \) -name '*.so*' -printf '%f\n' | sort -u)
  comm -23 <(echo "$needed" | grep -Ev "$assumed" || true) <(echo "$have")
}
for round in 1 2 3 4 5 6 7 8; do
  mapfile -t sonames < <(missing_sonames)
  [[ ${#sonames[@]} -eq 0 ]] && break
  more=() aliases=()
  for s in "${sonames[@]}"; do
    hit=$(dpkg -S "*/$s" 2>/dev/null | head -1) || true
    if [[ -z "$hit" ]]; then
      # Provided through Debian's alternatives (e.g. libpsm_infinipath.so.1): the package has
      # the versioned file; the soname link is made below, as update-alternatives would.
      hit=$(dpkg -S "*/$s.*" 2>/dev/null | head -1) || true
      [[ -n "$hit" ]] && aliases+=("$s=${hit#*: }")
    fi
    [[ -n "$hit" ]] || { echo "gpu_bundle: no installed package provides $s (run scripts/setup.sh first)" >&2; exit 1; }
    p=${hit%%:*}
    [[ "$fetched" == *" $p "* || " ${more[*]} " == *" $p "* ]] || more+=("$p")
  done
  [[ ${#more[@]} -eq 0 && ${#aliases[@]} -eq 0 ]] && { echo "gpu_bundle: unresolved after fetching: ${sonames[*]}" >&2; exit 1; }
  echo "gpu_bundle: round $round: ${sonames[*]} -> fetching ${more[*]}"
  [[ ${#more[@]} -gt 0 ]] && fetch "${more[@]}"
  fetched+="${more[*]} "
  for a in "${aliases[@]}"; do
    ln -sfn "$(realpath -m --relative-to="$root/usr/lib/$arch" "$root${a#*=}")" "$root/usr/lib/$arch/${a%%=*}"
  done
done
[[ -z "$(missing_sonames)" ]] || { echo "gpu_bundle: libraries still missing: $(missing_sonames | tr '\n' ' ')" >&2; exit 1; }

echo "gpu_bundle: trimming"
rm -rf "${root:?}"/usr/share/{doc,man,lintian,info,bug,javascript,locale,gdb} "${root:?}"/etc "$root/usr/lib/$arch/fortran"
find "$root" \( -name '*fortran*' -o -name '*.mod' -o -name 'mpif*' -o -name '*java*' -o -name '*.jar' \
  -o -name 'libhdf5*cpp*' -o -name 'libhdf5*hl*' -o -name 'libicui18n*' -o -name 'libicuio*' -o -name 'libicutest*' -o -name 'libicutu*' \
  -o -name 'icu-i18n.pc' -o -name 'icu-io.pc' -o -name 'libmpi_mpifh*' -o -name 'libmpi_usempi*' \
  -o -name '*oshmem*' -o -name 'osh*' -o -name 'shmem*' -o -name 'mca_spml_*' -o -name 'mca_sshmem_*' \
  -o -name 'mca_atomic_*' -o -name 'mca_scoll_*' -o -name 'mca_memheap_*' \) \
  -prune -exec rm -rf {} +
# Static libraries: only those a CMake package file names (its imported targets check they exist).
cmake_files=$(find "$root" -name '*.cmake' -print0 | xargs -0 cat 2>/dev/null || true)
while IFS= read -r -d '' a; do
  grep -qF "$(basename "$a")" <<<"$cmake_files" || rm -f "$a"
done < <(find "$root" -name '*.a' -print0)
# No h5cc here: without it FindHDF5 searches CMAKE_PREFIX_PATH (h5cc would print /usr paths).
rm -f "$root"/usr/bin/h5*
# OpenMPI's internal headers: mpi.h needs only its C++ bindings (openmpi/ompi/mpi/cxx).
inc="$root/usr/lib/$arch/openmpi/include/openmpi"
find "$inc" -mindepth 1 -maxdepth 1 ! -name ompi -exec rm -rf {} +
find "$inc/ompi" -mindepth 1 -maxdepth 1 ! -name mpi -exec rm -rf {} +
find "$inc/ompi/mpi" -mindepth 1 -maxdepth 1 ! -name cxx -exec rm -rf {} +

# Absolute links (e.g. libz.so -> /lib/...) made relative to the tree; Debian's alternatives
# (made by maintainer scripts, not in the packages) made as relative links; dangling ones removed.
while IFS= read -r -d '' l; do
  t=$(readlink "$l")
  [[ "$t" == /* ]] && ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$root$t")" "$l"
done < <(find "$root" -type l -print0)
for w in mpirun mpiexec mpicc mpicxx mpic++ mpiCC; do ln -sfn "$w.openmpi" "$root/usr/bin/$w"; done
ln -sfn openmpi/lib/libmpi.so "$root/usr/lib/$arch/libmpi.so"
ln -sfn openmpi/lib/libmpi_cxx.so "$root/usr/lib/$arch/libmpi_cxx.so"
mkdir -p "$root/usr/include/$arch" "$root/usr/lib/$arch/pkgconfig"
ln -sfn ../../lib/$arch/openmpi/include "$root/usr/include/$arch/mpi"
for pc in ompi ompi-c ompi-cxx; do ln -sfn "$pc.pc" "$root/usr/lib/$arch/pkgconfig/${pc/ompi/mpi}.pc"; done
find "$root" -xtype l -delete
find "$root" -type d -empty -delete

echo "gpu_bundle: fixture models and GPT-2's BPE files (bench/paper_sweep_gpu.sh's token features)"
mkdir -p "$out/models" "$out/gpt2-tokenizer"
cp -r "$src"/tests/data/models/. "$out/models/"
tok="$("$src/scripts/fetch_gpt2_encoder.sh")"
cp "$tok/vocab.json" "$tok/merges.txt" "$out/gpt2-tokenizer/"

# The newest glibc and libstdc++ symbol versions the bundle's binaries use: the device's must
# be at least these (env.sh checks glibc).
versions=$(find "$root" -type f \( -name '*.so*' -o -path '*/bin/*' \) -print0 | xargs -0 objdump -T 2>/dev/null || true)
glibc=$(grep -o 'GLIBC_[0-9.]*' <<<"$versions" | sed 's/GLIBC_//' | sort -uV | tail -1)
glibcxx=$(grep -o 'GLIBCXX_[0-9.]*' <<<"$versions" | sed 's/GLIBCXX_//' | sort -uV | tail -1)

cat >"$out/env.sh" <<EOF
# Points CMake, the compiler, the loader and a relocated OpenMPI at this bundle (made by
# scripts/gpu_bundle.sh from Debian 12 packages). Usage: . env.sh
# The bundle needs glibc >= $glibc and libstdc++ with GLIBCXX_$glibcxx.
_b="\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)/root"
_libs="\$_b/usr/lib/$arch:\$_b/usr/lib/$arch/openmpi/lib:\$_b/usr/lib/$arch/pmix2/lib:\$_b/lib/$arch"
export LINSWEEP_BUNDLE="\$_b"
export LINSWEEP_BUNDLE_GLIBC="$glibc"
_prepend() { export "\$1=\$2\${!1:+:\${!1}}"; }  # _prepend VAR DIRS: DIRS first on VAR's list
_prepend PATH "\$_b/usr/bin"
_prepend LD_LIBRARY_PATH "\$_libs"
_prepend LIBRARY_PATH "\$_libs"
_prepend CPATH "\$_b/usr/include"
_prepend CMAKE_PREFIX_PATH "\$_b/usr"
_prepend PKG_CONFIG_PATH "\$_b/usr/lib/$arch/pkgconfig"
# FindHDF5 without h5cc: Debian's include/ and lib/ links under hdf5/serial.
export HDF5_ROOT="\$_b/usr/lib/$arch/hdf5/serial"
export OPAL_PREFIX="\$_b/usr"
export PMIX_INSTALL_PREFIX="\$_b/usr/lib/$arch/pmix2"
export HWLOC_PLUGINS_PATH="\$_b/usr/lib/$arch/hwloc"
_have=\$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print \$2}')
if [[ -n "\$_have" && "\$(printf '%s\n' "$glibc" "\$_have" | sort -V | head -1)" != "$glibc" ]]; then
  echo "env.sh: warning: glibc \$_have here, the bundle needs $glibc" >&2
fi
unset _b _libs _have
unset -f _prepend
EOF

echo "gpu_bundle: packing $out.tar.gz"
tar -C "$(dirname "$out")" -czf "$out.tar.gz" --exclude=debs "$(basename "$out")"

echo "gpu_bundle: contents (fetched:$fetched)"
du -sh --exclude=debs "$out"/root/usr/{bin,include,lib,share} "$out"/root/lib "$out"/models "$out"/gpt2-tokenizer 2>/dev/null || true
tree_mib=$(( ($(du -sb --exclude=debs "$out" | cut -f1) + 1048575) / 1048576 ))  # bytes, not blocks
tar_mib=$(( ($(stat -c %s "$out.tar.gz") + 1048575) / 1048576 ))
echo "gpu_bundle: $out: ${tree_mib} MiB of files (debs/ not counted), $out.tar.gz: ${tar_mib} MiB; needs glibc >= $glibc, GLIBCXX_$glibcxx"
# The tarball is what travels to the device (links survive it; the device unpacks it there).
if [[ $tar_mib -gt $limit_mib ]]; then
  echo "gpu_bundle: $out.tar.gz is ${tar_mib} MiB, over the ${limit_mib} MiB transfer limit; trim the tree (see the trimming step)" >&2
  exit 1
fi
