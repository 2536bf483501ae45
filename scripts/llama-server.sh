#!/usr/bin/env bash
# llama-server.sh - llama.cpp's llama-server, built from the same pinned source tree pipit uses
# (third_party/llama.cpp), cached outside the clone, and run around a test.
#
#   scripts/llama-server.sh build
#       Build llama-server into the cache if it is not there yet; print the binary's path.
#       Cache: ${PIPIT_CACHE:-~/.cache/pipit}/llama-server-<llama tag>/bin/llama-server.
#       The first build takes ~20 minutes on 2 cores (it compiles llama, ggml, common, mtmd and
#       the server); it runs under `nice -n 19` with PIPIT_SERVER_JOBS jobs (default 1) and uses
#       ccache when installed. Concurrent callers wait on a lock instead of building twice.
#   scripts/llama-server.sh path
#       Print the cached binary's path; exit 1 if it is not built.
#   scripts/llama-server.sh run <model.gguf> <command> [args...]
#       Make sure the binary exists (building it unless PIPIT_NO_SERVER_BUILD=1), start it on
#       127.0.0.1 on a free port with the model (1 thread, small context), wait for /health, run
#       <command> with PIPIT_TEST_SERVER_URL=http://127.0.0.1:<port> in its environment, and stop
#       the server whatever happens (trap). Exit status: the command's; 77 (ctest's skip code)
#       when the binary is missing and building it is disabled.
#
# Environment: PIPIT_CACHE, PIPIT_SERVER_JOBS, PIPIT_NO_SERVER_BUILD=1, PIPIT_LLAMA_SERVER (use
# this binary instead of the cached one), PIPIT_SERVER_MAX_S (the server is killed after this
# many seconds whatever happens, default 1800).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
pid=""
log=""
src="$root/third_party/llama.cpp"
cache=${PIPIT_CACHE:-$HOME/.cache/pipit}
SKIP=77

say() { printf 'llama-server.sh: %s\n' "$*" >&2; }
die() {
    say "error: $*"
    exit 1
}

[ -f "$src/CMakeLists.txt" ] || die "no llama.cpp source tree in $src: run scripts/bootstrap.sh"
tag=$(sed -n 's/.*"tag"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$src/.pipit-release.json" \
    2>/dev/null || true)
[ -n "$tag" ] || tag=unknown
dir="$cache/llama-server-$tag"
bin="$dir/bin/llama-server"
if [ -n "${PIPIT_LLAMA_SERVER:-}" ]; then
    bin=$PIPIT_LLAMA_SERVER
fi

# ---------------------------------------------------------------- build
build() {
    if [ -x "$bin" ]; then
        return 0
    fi
    mkdir -p "$dir"
    exec 9>"$dir/.lock"
    say "waiting for the build lock $dir/.lock"
    flock 9
    if [ -x "$bin" ]; then # built by whoever held the lock
        exec 9>&-
        return 0
    fi
    local launcher=()
    if command -v ccache >/dev/null 2>&1; then
        launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    fi
    say "building llama-server $tag into $dir (first time only; ~20 minutes on 2 cores)"
    # Static libraries: one self-contained binary. No network at build time: no CURL, no
    # OpenSSL, no prebuilt web UI download. GGML_NATIVE=OFF keeps the cache portable.
    nice -n 19 cmake -S "$src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
        "${launcher[@]}" >"$dir/configure.log" 2>&1 \
        || die "configure failed: see $dir/configure.log"
    nice -n 19 cmake --build "$dir/build" -j"${PIPIT_SERVER_JOBS:-1}" --target llama-server \
        >"$dir/build.log" 2>&1 || die "build failed: see $dir/build.log"
    local out="$dir/build/bin/llama-server"
    [ -x "$out" ] || die "build finished but $out is missing"
    mkdir -p "$dir/bin"
    cp "$out" "$bin.tmp"
    mv "$bin.tmp" "$bin" # atomic: a present binary is a complete one
    exec 9>&-
    say "built $bin"
}

# ---------------------------------------------------------------- run
port_busy() { # port -> 0 when something listens on 127.0.0.1:port
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

run() {
    [ $# -ge 2 ] || die "usage: $0 run <model.gguf> <command> [args...]"
    local model=$1
    shift
    [ -f "$model" ] || die "model not found: $model"
    if [ ! -x "$bin" ]; then
        if [ "${PIPIT_NO_SERVER_BUILD:-0}" = 1 ]; then
            say "SKIP: $bin is not built and PIPIT_NO_SERVER_BUILD=1 disables building it"
            exit $SKIP
        fi
        build
    fi

    # pid and log are globals: the EXIT trap runs after this function has returned.
    local port="" attempt
    log=$(mktemp "${TMPDIR:-/tmp}/pipit-llama-server.XXXXXX")
    stop() {
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 1 50); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
            done
            kill -9 "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
        rm -f "$log"
        pid=""
    }
    trap stop EXIT
    trap 'exit 130' INT TERM

    for attempt in 1 2 3 4 5; do
        port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        if port_busy "$port"; then
            continue
        fi
        # `timeout` is the last line of defence: the server dies even if this script is
        # killed without running its trap.
        timeout -k 10 "${PIPIT_SERVER_MAX_S:-1800}" \
            "$bin" -m "$model" --host 127.0.0.1 --port "$port" -t 1 -tb 1 -c 512 -np 1 \
            -n 32 --no-webui >"$log" 2>&1 &
        pid=$!
        local ready=0
        for _ in $(seq 1 300); do # up to 60 s to load the model
            if ! kill -0 "$pid" 2>/dev/null; then
                break
            fi
            if curl -fsS -m 2 --noproxy '*' "http://127.0.0.1:$port/health" >/dev/null 2>&1
            then
                ready=1
                break
            fi
            sleep 0.2
        done
        if [ $ready = 1 ]; then
            break
        fi
        say "attempt $attempt: server did not become healthy on port $port; its log:"
        tail -n 20 "$log" >&2 || true
        stop
        log=$(mktemp "${TMPDIR:-/tmp}/pipit-llama-server.XXXXXX")
    done
    [ -n "$pid" ] || die "could not start llama-server"
    say "llama-server $tag (pid $pid) ready on 127.0.0.1:$port"
    local rc=0
    PIPIT_TEST_SERVER_URL="http://127.0.0.1:$port" "$@" || rc=$?
    if [ $rc -ne 0 ]; then
        say "test failed ($rc); server log tail:"
        tail -n 30 "$log" >&2 || true
    fi
    return $rc
}

case "${1:-}" in
    build)
        build
        printf '%s\n' "$bin"
        ;;
    path)
        [ -x "$bin" ] || exit 1
        printf '%s\n' "$bin"
        ;;
    run)
        shift
        run "$@"
        ;;
    *) die "usage: $0 build | path | run <model.gguf> <command> [args...]" ;;
esac
