#!/usr/bin/env bash
# Offline libFuzzer run from a prebuilt bundle on a machine with no compiler: WORKERS processes of
# one harness, each with its own seed and its own new-input folder, for SECONDS each over the
# committed corpus, with the options of .ci/fuzz; prints the total executions and every finding's
# report, and exits 1 when there is a finding. tests/fuzz/README.md (offline runs) says how to make
# the bundle.
#
#   bash tests/fuzz/offline.sh BUNDLE HARNESS [WORKERS] [SECONDS] [OUTDIR]
#
# BUNDLE: fuzzbin.tar.xz (fuzz_loader, fuzz_run, lib/ with libprotobuf-c.so.1) or a folder holding
# them unpacked. HARNESS: loader or run. WORKERS: default the number of CPUs. SECONDS: default 1200.
# OUTDIR (default $OUT/fuzz_HARNESS when $OUT is set, else /tmp/mace-fuzz/HARNESS): the workers' logs,
# and the inputs of any finding (crash-*, leak-*, timeout-*, oom-*). FUZZ_SEED_BASE (default 7) sets
# the seeds: worker i gets FUZZ_SEED_BASE + 1000 * i. Run it from the repository root.
set -u
if [ $# -lt 2 ]; then
  sed -n 2,14p "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
bundle=$1
h=$2
workers=${3:-$(nproc)}
secs=${4:-1200}
if [ -n "${5:-}" ]; then out=$5; elif [ -n "${OUT:-}" ]; then out=$OUT/fuzz_$h; else out=/tmp/mace-fuzz/$h; fi
case "$h" in loader | run) ;; *) echo "offline.sh: harness '$h' is not loader or run" >&2; exit 2 ;; esac
corpus=tests/fuzz/corpus/$h
[ -d "$corpus" ] || { echo "offline.sh: $corpus is missing (run from the repository root)" >&2; exit 2; }

if [ -d "$bundle" ]; then
  bin=$bundle
else
  [ -f "$bundle" ] || { echo "offline.sh: bundle $bundle does not exist" >&2; exit 2; }
  bin=$(mktemp -d /tmp/mace-fuzzbin.XXXXXX)
  tar xJf "$bundle" -C "$bin" || { echo "offline.sh: cannot unpack $bundle" >&2; exit 2; }
fi
exe=$bin/fuzz_$h
[ -x "$exe" ] || { echo "offline.sh: $exe is missing from the bundle" >&2; exit 2; }
export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ldd "$exe" | grep -q "not found"; then
  echo "offline.sh: $exe cannot load a library:" >&2
  ldd "$exe" | grep "not found" >&2
  exit 2
fi

# The options of .ci/fuzz: ASan + UBSan halt on the first report, leaks are findings, a 4 GB
# malloc limit; a run arena or infer-time tensor over 1 GiB is refused, not allocated.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:malloc_limit_mb=4096"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export MACE_MAX_ARENA_BYTES=1073741824

mkdir -p "$out" || exit 2
work=$(mktemp -d /tmp/mace-fuzzwork.XXXXXX)
echo "offline.sh: fuzz_$h, $workers workers x $secs s, logs and findings in $out"
pids=()
for i in $(seq 1 "$workers"); do
  mkdir -p "$work/$i" "$out/artifacts_$i"
  # first folder: this worker's new inputs; the committed corpus is read only
  "$exe" -seed=$((${FUZZ_SEED_BASE:-7} + 1000 * i)) -max_total_time="$secs" -timeout=20 \
    -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 -artifact_prefix="$out/artifacts_$i/" \
    "$work/$i" "$corpus" >"$out/log_$i.txt" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done

total=0
found=0
for i in $(seq 1 "$workers"); do
  log=$out/log_$i.txt
  # the final stats; a worker stopped by a finding may lack them: its last status line counts
  n=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)
  [ -n "$n" ] || n=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
  total=$((total + ${n:-0}))
  echo "worker $i: ${n:-0} executions"
  if grep -qE '^==[0-9]+==ERROR|ERROR: libFuzzer|runtime error:|^SUMMARY: |^Slowest unit:' "$log" ||
     [ -n "$(ls -A "$out/artifacts_$i")" ]; then
    found=$((found + 1))
    echo "== finding of worker $i ($log):"
    # the report from its first line, without libFuzzer's progress lines
    awk '/^==[0-9]+==ERROR|ERROR: libFuzzer|runtime error:|^Slowest unit:/ {on = 1} on && !/^#[0-9]+\t/' "$log" |
      head -80
    ls "$out/artifacts_$i"
  fi
done
echo "fuzz_$h: total executions $total, workers $workers, findings $found"
rm -rf "$work"
[ "$found" -eq 0 ]
