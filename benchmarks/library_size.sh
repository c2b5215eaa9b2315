#!/usr/bin/env bash
# Library sizes, full and op-selected (cmake/op_selection.cmake), for the README's table: builds libmace.a,
# libmace.so and mace_run with MACE_GC_SECTIONS=ON per architecture (x86-64 natively, aarch64 with
# cmake/aarch64-linux-gnu.cmake), once in full and once per ops file given, strips copies and prints `size`
# (text + data + bss, decimal) of each as a markdown table. A selection NAME=OPS_FILE[:UNITS] also leaves
# out the kernel units UNITS (MACE_KERNELS_EXCLUDE, comma separated). One build folder per architecture
# (and one more for the selections that leave kernel units out): changing the op selection recompiles
# the registry and relinks.
#
#   mace ops --model mobilenet_v2.pb > mnv2.txt; mace ops --model resnet50.pb > r50.txt
#   benchmarks/library_size.sh MobileNetV2=mnv2.txt ResNet-50=r50.txt \
#     MobileNetV2=mnv2.txt:dwconv,directconv,nchwc_winograd ResNet-50=r50.txt:dwconv,directconv,nchwc_dwconv
#   ARCHS=aarch64 benchmarks/library_size.sh ...       # one architecture; CMAKE_ARGS: more cmake options;
#                                                      # SKIP_FULL=1: the selections only
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-2}
out=${OUT:-build/size}
echo "| arch | ops | op types | kernel units left out | libmace.a | libmace.so | mace_run |"
echo "| --- | --- | --- | --- | ---: | ---: | ---: |"
for arch in ${ARCHS:-x86-64 aarch64}; do
  tc=()
  strip=strip; size=size
  if [ $arch = aarch64 ]; then
    command -v aarch64-linux-gnu-gcc >/dev/null || { echo "| aarch64 | (no cross compiler) | | | | | |"; continue; }
    tc=(-DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake)
    strip=aarch64-linux-gnu-strip; size=aarch64-linux-gnu-size
  fi
  sels=(full "$@"); [ -n "${SKIP_FULL:-}" ] && sels=("$@")
  for sel in "${sels[@]}"; do
    name=${sel%%=*}; file=${sel#*=}; units=""
    case "$file" in *:*) units=${file#*:}; file=${file%%:*};; esac
    ops_arg=(-DMACE_OPS_FILE=)
    ntypes=all
    if [ "$sel" != full ]; then
      ops_arg=(-DMACE_OPS_FILE=$(realpath "$file"))
      ntypes=$(grep -c '^[A-Za-z]' "$file")
    fi
    bdir=$out/$arch; [ -n "$units" ] && bdir=$out/$arch-kernels
    cmake -S . -B "$bdir" "${tc[@]}" -DCMAKE_BUILD_TYPE=Release -DMACE_BUILD_TESTS=OFF \
      -DMACE_GC_SECTIONS=ON "${ops_arg[@]}" -DMACE_KERNELS_EXCLUDE="$units" ${CMAKE_ARGS:-} >/dev/null
    nice cmake --build "$bdir" -j"$jobs" --target mace_static mace_shared mace_run >/dev/null
    s=$bdir/stripped; mkdir -p "$s"
    $strip --strip-unneeded -o "$s/libmace.a" "$bdir/libmace.a"
    $strip --strip-unneeded -o "$s/libmace.so" "$(realpath "$bdir/libmace.so")"
    $strip -o "$s/mace_run" "$bdir/mace_run"
    a=$($size -t "$s/libmace.a" | tail -1 | awk '{print $4}')
    so=$($size "$s/libmace.so" | tail -1 | awk '{print $4}')
    run=$($size "$s/mace_run" | tail -1 | awk '{print $4}')
    echo "| $arch | $name | $ntypes | ${units:-none} | $a | $so | $run |"
  done
done
