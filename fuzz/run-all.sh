#!/usr/bin/env bash
# run-all.sh BUILD_DIR SECONDS - `make fuzz`: every target of fuzz/targets.txt for SECONDS
# each, one after the other on one core, then a table of executions, time and findings
# (also written to BUILD_DIR/fuzz-work/summary.txt). Exit status 1 when any target found
# something; its artifacts are in BUILD_DIR/fuzz-work/<target>/artifacts/.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1 seconds=$2
work="$build/fuzz-work"
mkdir -p "$work"
summary="$work/summary.txt"
rev=$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$here/.." status --porcelain -- src include fuzz 2>/dev/null | head -1)
{
    echo "# make fuzz: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $rev${dirty:+ (+ local changes)}," \
        "$seconds s per target, 1 core"
    printf '%-10s %12s %8s %10s %s\n' target executions seconds exec/s result
} >"$summary"
total=0 failed=0
while read -r name max_len; do
    case "$name" in ''|'#'*) continue ;; esac
    start=$(date +%s)
    "$here/run.sh" "$name" "$build/fuzz/fuzz-$name" "$seconds" "$max_len" "$here/corpus/$name" \
        "$work/$name"
    rc=$?
    took=$(( $(date +%s) - start ))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name/last.log" | tail -1)
    execs=${execs:-0}
    total=$((total + execs))
    if [ "$rc" -eq 0 ]; then
        result="no crash, no leak"
    else
        result="FINDING (exit $rc): $(ls -t "$work/$name/artifacts" 2>/dev/null | head -1)"
        failed=1
    fi
    printf '%-10s %12s %8s %10s %s\n' "$name" "$execs" "$took" "$((execs / (took > 0 ? took : 1)))" \
        "$result" >>"$summary"
done <"$here/targets.txt"
printf '%-10s %12s\n' total "$total" >>"$summary"
echo
cat "$summary"
exit "$failed"
