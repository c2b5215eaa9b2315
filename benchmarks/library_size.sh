#!/usr/bin/env bash
# Library sizes, full and op-selected (cmake/op_selection.cmake), for the README's table: builds libmace.a,
# libmace.so and mace_run with MACE_GC_SECTIONS=ON per architecture (x86-64 natively, aarch64 with
# cmake/aarch64-linux-gnu.cmake), in full and per ops file given, each with the OpenCL runtime (the default
# build) and without it (MACE_OPENCL=OFF, CPU only); strips copies and prints `size` (text + data + bss,
# decimal) of each as a markdown table, with the .so as a share of the full default .so and of the full
# CPU-only .so. An op selection also leaves out the kernel fields its ops never read (automatic); a
# selection NAME=OPS_FILE:UNITS also leaves out the kernel units UNITS (MACE_KERNELS_EXCLUDE, comma
# separated; benchmarks/kernels_unused.py lists those a model's run never calls). One build folder per
# architecture: a selection recompiles the registry and the SIMD tables (csrc/runtime/cpu/simd_dispatch.c) and
# relinks; OpenCL on/off recompiles the runtime's files.
#
#   mace ops --model mobilenet_v2.pb > mnv2.txt; mace ops --model resnet50.pb > r50.txt
#   benchmarks/library_size.sh MobileNetV2=mnv2.txt ResNet-50=r50.txt \
#     MobileNetV2=mnv2.txt:$(python3 benchmarks/kernels_unused.py build/x/mace_run --model mnv2.pb ...)
#   ARCHS=aarch64 OPENCL=ON benchmarks/library_size.sh ...   # one architecture, one OpenCL setting;
#                                                            # CMAKE_ARGS: more cmake options
#   SKIP_FULL=1 FULL_SO_ON=n FULL_SO_OFF=m benchmarks/library_size.sh ...  # selections only, the full
#                                                            # .so sizes given (one architecture)
#   MODELS="MobileNetV2=dir/mobilenet_v2 ResNet-50=dir/resnet50" benchmarks/library_size.sh ...
#     runs each build's mace_run (qemu-aarch64 for aarch64) once on PREFIX.pb/.data with random inputs
#     (seed 0, one thread) for the models of that row's name (every model in the full rows) and prints
#     the SHA-256 (first 12 hex digits) of its output files: equal digits, equal bits.
# REUSE_OBJECTS=1: after each configure, mark the objects already built up to date except the registry,
# the SIMD tables and the OpenCL runtime's (the only ones a selection or MACE_OPENCL changes). With
# CMake's Makefile generator, a selection that drops a kernel file compiled with per-file ISA flags
# rewrites flags.make, which every object depends on, and so rebuilds everything. Only when no source
# changed since the last build in that folder.
# Each build's unstripped mace_run is kept as $OUT/<arch>/stripped/<name>-<ON|OFF>/mace_run.unstripped
# (the input of benchmarks/kernels_unused.py).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-2}
out=${OUT:-build/size}
echo "| arch | ops | OpenCL | kernel units left out (beyond the ops' own) | libmace.a | libmace.so | of full | of full CPU-only | mace_run | outputs (SHA-256) |"
echo "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"
for arch in ${ARCHS:-x86-64 aarch64}; do
  tc=()
  strip=strip; size=size; emu=()
  if [ $arch = aarch64 ]; then
    command -v aarch64-linux-gnu-gcc >/dev/null || { echo "| aarch64 | (no cross compiler) | | | | | | | | |"; continue; }
    tc=(-DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake)
    strip=aarch64-linux-gnu-strip; size=aarch64-linux-gnu-size; emu=(qemu-aarch64)
  fi
  bdir=$out/$arch
  full_on=${FULL_SO_ON:-}; full_off=${FULL_SO_OFF:-}
  sels=(full "$@"); [ -n "${SKIP_FULL:-}" ] && sels=("$@")
  rows=()
  for cl in ${OPENCL:-ON OFF}; do  # OpenCL outermost: toggling it recompiles the runtime's files
    for sel in "${sels[@]}"; do
      name=${sel%%=*}; file=${sel#*=}; units=""
      case "$file" in *:*) units=${file#*:}; file=${file%%:*};; esac
      ops_arg=(-DMACE_OPS_FILE=)
      ntypes="all"
      if [ "$sel" != full ]; then
        ops_arg=(-DMACE_OPS_FILE=$(realpath "$file"))
        ntypes="$(grep -c '^[A-Za-z]' "$file") types"
      fi
      cmake -S . -B "$bdir" "${tc[@]}" -DCMAKE_BUILD_TYPE=Release -DMACE_BUILD_TESTS=OFF \
        -DMACE_GC_SECTIONS=ON -DMACE_OPENCL=$cl "${ops_arg[@]}" -DMACE_KERNELS_EXCLUDE="$units" \
        ${CMAKE_ARGS:-} >/dev/null
      if [ -n "${REUSE_OBJECTS:-}" ]; then
        find "$bdir/CMakeFiles/mace_objects.dir" -name '*.o' ! -path '*/runtime/opencl/*' \
          ! -name cl_sources.c.o ! -name registry.c.o ! -name simd_dispatch.c.o -exec touch {} +
      fi
      nice cmake --build "$bdir" -j"$jobs" --target mace_static mace_shared mace_run >/dev/null
      s=$bdir/stripped/$name-$cl${units:+-k}; mkdir -p "$s"
      $strip --strip-unneeded -o "$s/libmace.a" "$bdir/libmace.a"
      $strip --strip-unneeded -o "$s/libmace.so" "$(realpath "$bdir/libmace.so")"
      $strip -o "$s/mace_run" "$bdir/mace_run"
      cp "$bdir/mace_run" "$s/mace_run.unstripped"
      a=$($size -t "$s/libmace.a" | tail -1 | awk '{print $4}')
      so=$($size "$s/libmace.so" | tail -1 | awk '{print $4}')
      run=$($size "$s/mace_run" | tail -1 | awk '{print $4}')
      if [ "$sel" = full ]; then
        if [ $cl = ON ]; then full_on=$so; else full_off=$so; fi
      fi
      hashes=""
      for m in ${MODELS:-}; do
        mname=${m%%=*}; prefix=$(realpath "${m#*=}")
        [ "$sel" = full ] || [ "$mname" = "$name" ] || continue
        rm -rf "$s/out-$mname"
        "${emu[@]}" "$s/mace_run" --model "$prefix.pb" --weights "$prefix.data" --round 1 \
          --num_threads 1 --output_dir "$s/out-$mname" >/dev/null
        h=$(cd "$s/out-$mname" && cat $(ls | sort) | sha256sum | cut -c1-12)
        hashes="$hashes${hashes:+, }$mname $h"
      done
      rows+=("$arch|$name ($ntypes)|$cl|${units:-none}|$a|$so|$run|$hashes")
      echo "built: ${rows[-1]}" >&2
    done
  done
  pct() { [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f%%", 100*a/b}' || true; }
  for r in "${rows[@]}"; do
    IFS='|' read -r c1 c2 c3 c4 a so run hashes <<<"$r"
    echo "| $c1 | $c2 | $c3 | ${c4//,/, } | $a | $so | $(pct "$so" "$full_on") | $(pct "$so" "$full_off") | $run | $hashes |"
  done
done
