#!/usr/bin/env bash
# side-by-side.sh - the same camera session through pipit and through node-llama-cpp's function
# calling, on the same GGUF and the same libllama, one table (docs/bench.md). A benchmark, not a
# test: it prints numbers and fails only when a side cannot run.
#
#   bench/side-by-side.sh [--shape NAME | --model FILE] [--turns N] [--ctx N] [--threads N]
#                         [--out DIR]
#
#   --shape NAME  make a random model of that shape with `pipit make-model --shape NAME --type
#                 q8_0` into the cache (default smollm2-135m); --model FILE uses a GGUF instead
#   --turns N     the first N utterances of bench/camera-session.txt (default all 60)
#   --ctx N       context window of both sides (default: the model's trained length)
#   --threads N   CPU threads of both sides (default 1)
#   --out DIR     where the per-turn records go (default $PIPIT_CACHE/bench/<shape>-<time>);
#                 a side whose records in DIR already hold every turn is not run again
#
# node-llama-cpp comes from the npm registry, pinned to 3.21.1 (the release pipit's libllama
# comes from, scripts/deps.lock) by bench/node/package-lock.json, with its prebuilt linux-x64
# binaries: `npm ci --ignore-scripts --omit=optional` into $PIPIT_CACHE/bench/node-<lock hash>
# (outside the clone), NODE_LLAMA_CPP_SKIP_DOWNLOAD=true, nothing is built or fetched elsewhere.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${PIPIT_CACHE:-$HOME/.cache/pipit}
pipit=${PIPIT_BIN:-$root/build/pipit}
shape=smollm2-135m
model=
turns=0
ctx=0
threads=1
out=

die() { printf 'side-by-side: %s\n' "$*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case "$1" in
        --shape) shape=$2; shift 2 ;;
        --model) model=$2; shift 2 ;;
        --turns) turns=$2; shift 2 ;;
        --ctx) ctx=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option '$1' (see --help)" ;;
    esac
done
[ -x "$pipit" ] || die "$pipit is missing: build pipit first (make build)"
{ command -v node && command -v npm; } >/dev/null || die "node and npm are needed"

# ------------------------------------------------------------------ node-llama-cpp, pinned
lock="$root/bench/node/package-lock.json"
nodedir="$cache/bench/node-$(cat "$root/bench/node/package.json" "$lock" | sha256sum | cut -c1-12)"
export NODE_LLAMA_CPP_SKIP_DOWNLOAD=true
if [ ! -f "$nodedir/node_modules/node-llama-cpp/package.json" ]; then
    mkdir -p "$nodedir"
    cp "$root/bench/node/package.json" "$lock" "$nodedir/"
    printf 'side-by-side: npm ci (node-llama-cpp 3.21.1, prebuilt linux-x64) in %s\n' "$nodedir" >&2
    (cd "$nodedir" && npm ci --ignore-scripts --omit=optional --no-audit --no-fund >&2) \
        || die "npm ci failed in $nodedir"
fi
cp "$root/bench/node/side-by-side.mjs" "$root/bench/node/summarize.mjs" "$nodedir/"

# ------------------------------------------------------------------ the model and the session
if [ -z "$model" ]; then
    model="$cache/bench/$shape-q8_0.gguf"
    if [ ! -f "$model" ]; then
        mkdir -p "$cache/bench"
        "$pipit" make-model --shape "$shape" --type q8_0 --out "$model.tmp" >&2
        mv "$model.tmp" "$model"
    fi
else
    shape=$(basename "$model" .gguf)
fi
[ -f "$model" ] || die "no model $model"
if [ "$ctx" -eq 0 ]; then
    ctx=$(cd "$nodedir" && node side-by-side.mjs --train-ctx --model "$model")
fi
out=${out:-$cache/bench/$shape-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
session="$out/session.txt"
if [ "$turns" -gt 0 ]; then
    head -n "$turns" "$root/bench/camera-session.txt" >"$session"
else
    cp "$root/bench/camera-session.txt" "$session"
fi
n=$(grep -c . "$session")
tools="$root/tools/camera.json"
printf 'side-by-side: %s, %d turns, context %d, %d thread(s), records in %s\n' \
    "$model" "$n" "$ctx" "$threads" "$out" >&2

# ------------------------------------------------------------------ the four runs
# pipit: every answer a call (--force-call), CSO memory (the default), no wall-clock budget
# (the machine may be shared; a budget would turn a slow turn into a failed one), a failed turn
# does not stop the run (--keep-going); exit status 1 then, which is counted, not fatal.
done_already() { # file: its records hold every turn of this session
    [ -f "$1" ] && [ "$(grep -c . "$1")" -eq "$n" ] && printf 'side-by-side: kept %s\n' "$1" >&2
}
run_pipit() { # syntax file
    local t0 t1
    done_already "$2" && return 0
    t0=$(date +%s.%N)
    "$pipit" run --model "$model" --tools "$tools" --syntax "$1" --force-call --ctx "$ctx" \
        --threads "$threads" --budget-ms 0 --keep-going --json <"$session" >"$2" \
        2>"$2.stderr" || true
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" -v s="$1" 'BEGIN { printf "side-by-side: pipit --syntax %s: %.0f s\n", s, b - a }' >&2
}
run_pipit hermes "$out/pipit-hermes.pipit.jsonl"
run_pipit pipit "$out/pipit-pipit.pipit.jsonl"
# node-llama-cpp: once with the pack's schemas as they are, once without maxLength (see
# bench/node/side-by-side.mjs: llama.cpp's grammar parser refuses a maxLength of 2,000)
run_node() { # file [option]
    local t0 t1
    done_already "$1" && return 0
    t0=$(date +%s.%N)
    (cd "$nodedir" && node side-by-side.mjs --model "$model" --tools "$tools" --turns "$session" \
        --ctx "$ctx" --threads "$threads" ${2:+"$2"}) >"$1" 2>"$1.stderr" \
        || die "node-llama-cpp failed (see $1.stderr)"
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" -v o="${2:-}" \
        'BEGIN { printf "side-by-side: node-llama-cpp %s: %.0f s\n", o, b - a }' >&2
}
run_node "$out/node-llama-cpp.node.jsonl"
run_node "$out/node-llama-cpp-nomaxlen.node.jsonl" --no-max-length

(cd "$nodedir" && node summarize.mjs --tools "$tools" \
    "pipit, Hermes syntax=$out/pipit-hermes.pipit.jsonl" \
    "pipit, pipit syntax=$out/pipit-pipit.pipit.jsonl" \
    "node-llama-cpp 3.21.1=$out/node-llama-cpp.node.jsonl" \
    "node-llama-cpp, no maxLength=$out/node-llama-cpp-nomaxlen.node.jsonl") | tee "$out/table.md"
