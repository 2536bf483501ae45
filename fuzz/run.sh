#!/usr/bin/env bash
# run.sh NAME BINARY SECONDS MAX_LEN SEEDS WORK - run one libFuzzer target for SECONDS.
#
# The committed seeds (SEEDS, never written) and the inputs found by earlier runs
# (WORK/corpus) are replayed first, then the target fuzzes for SECONDS on one core. New inputs
# go to WORK/corpus, a crash, leak or timeout to WORK/artifacts/ (minimise it with
# `BINARY -minimize_crash=1 -runs=100000 FILE`). Prints one summary line; exit status is
# libFuzzer's (0: nothing found). FUZZ_RSS_MB (default 2048) caps the memory; FUZZ_FRESH=1
# forgets WORK/corpus first (the ctest entries: their time then stays bounded).
set -uo pipefail
name=$1 bin=$2 seconds=$3 max_len=$4 seeds=$5 work=$6
[ -x "$bin" ] || { echo "fuzz $name: $bin is not built" >&2; exit 2; }
[ -d "$seeds" ] || { echo "fuzz $name: no seed corpus $seeds" >&2; exit 2; }
[ "${FUZZ_FRESH:-0}" = 1 ] && rm -rf "$work/corpus"
mkdir -p "$work/corpus" "$work/artifacts"
log="$work/last.log"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$(cd "$(dirname "$0")/.." && pwd)/tests/lsan.supp}
[ -x /usr/lib/llvm-14/bin/llvm-symbolizer ] && export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-14/bin/llvm-symbolizer}
export PIPIT_CACHE=off # the fast-grammar decoder must not write mask caches while fuzzing
start=$(date +%s)
"$bin" -max_total_time="$seconds" -max_len="$max_len" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
    -timeout=20 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
    "$work/corpus" "$seeds" >"$log" 2>&1
rc=$?
end=$(date +%s)
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
files=$(find "$work/corpus" -type f | wc -l)
if [ "$rc" -eq 0 ]; then
    echo "fuzz $name: ${execs:-?} executions in $((end - start)) s, peak RSS ${rss:-?} MB," \
        "$files inputs found so far: no crash, no leak"
else
    echo "fuzz $name: FINDING after $((end - start)) s (exit $rc); log $log:"
    grep -E 'ERROR: |SUMMARY: |runtime error|broken promise|Test unit written' "$log" | head -10
    # the stack again, unwound slowly (a leak's allocation stack through jansson and libcurl,
    # which are built without frame pointers, is cut short by the fast unwinder)
    artifact=$(ls -t "$work/artifacts" 2>/dev/null | head -1)
    if [ -n "$artifact" ]; then
        ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0" "$bin" "$work/artifacts/$artifact" 2>&1 |
            grep -E '^ *#[0-9]+ .* in ' | grep -v -E ' in (fuzzer::|main|__libc_start|_start)' |
            head -25
    fi
fi
exit "$rc"
