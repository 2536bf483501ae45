#!/usr/bin/env bash
# bootstrap.sh - install what a fresh Debian 12 machine lacks to build and test pipit.
#
# 1. Debian packages (compiler, CMake, jansson, libcurl, cmocka, node/npm for the registry
#    client, clang-14 with its sanitizer/libFuzzer runtimes for fuzz/, ...): installed with
#    apt-get when missing and we are root; otherwise the script names the missing packages and
#    exits 1.
# 2. llama.cpp from the npm registry, pinned in scripts/deps.lock: the tarballs are fetched with
#    `npm pack` into a cache outside the clone ($PIPIT_CACHE, default ~/.cache/pipit), checked
#    against their sha512 digests, and unpacked into the git-ignored third_party/:
#      third_party/llama-bin/   prebuilt libllama, libggml, libggml-base, CPU backend variants
#      third_party/llama.cpp/   the llama.cpp source tree (headers, vocab files, grammars, tools)
# Idempotent: a second run checks stamps and does nothing.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${PIPIT_CACHE:-$HOME/.cache/pipit}
tp="$root/third_party"

say() { printf 'bootstrap: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# ---------------------------------------------------------------- Debian packages
pkgs=(build-essential cmake pkg-config git ca-certificates ccache
      libjansson-dev libcurl4-openssl-dev libcmocka-dev clang-format valgrind)
# fuzz/ (make fuzz, the fuzz entries of make test): clang-14, and libclang-rt-14-dev for
# -fsanitize=fuzzer,address,undefined (only "recommended" by clang-14, so not pulled in by
# --no-install-recommends); llvm-14 for llvm-symbolizer (readable sanitizer stack traces).
pkgs+=(clang-14 libclang-rt-14-dev llvm-14)
# npm is only the registry client: any installed npm will do (Node.js from elsewhere ships
# its own and conflicts with Debian's npm package).
if ! command -v npm >/dev/null 2>&1; then
    pkgs+=(nodejs npm)
fi
missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        die "missing Debian packages: ${missing[*]}; run as root: apt-get install ${missing[*]}"
    fi
    say "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || die "apt-get update failed"
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || die "apt-get install ${missing[*]} failed"
fi

# ---------------------------------------------------------------- llama.cpp from npm
mkdir -p "$cache/npm" "$tp"
stamp="$tp/.stamp-$(sha256sum "$root/scripts/deps.lock" | cut -c1-16)"
if [ -f "$stamp" ] && [ -f "$tp/llama.cpp/include/llama.h" ] \
    && [ -f "$tp/llama-bin/libllama.v0.4.0.so" ]; then
    exit 0
fi

fetch() { # name version sha512 -> prints the path of the verified tarball
    local name=$1 version=$2 sum=$3
    local file="$cache/npm/$(printf '%s' "$name" | sed 's#^@##; s#/#-#')-$version.tgz"
    if [ ! -f "$file" ] || ! echo "$sum  $file" | sha512sum --quiet -c - >/dev/null 2>&1; then
        rm -f "$file"
        say "fetching $name@$version from the npm registry"
        local tmp
        tmp=$(mktemp -d)
        (cd "$tmp" && npm pack --silent "$name@$version" >/dev/null) \
            || die "npm pack $name@$version failed"
        mv "$tmp"/*.tgz "$file"
        rmdir "$tmp"
    fi
    echo "$sum  $file" | sha512sum --quiet -c - >/dev/null 2>&1 \
        || die "integrity check failed for $file (expected sha512 $sum)"
    printf '%s\n' "$file"
}

rm -rf "$tp/llama-bin" "$tp/llama.cpp" "$tp"/.stamp-*
while read -r name version sum; do
    case "$name" in ''|'#'*) continue ;; esac
    tgz=$(fetch "$name" "$version" "$sum")
    work=$(mktemp -d)
    tar xzf "$tgz" -C "$work"
    case "$name" in
        node-llama-cpp)
            say "unpacking the llama.cpp source tree"
            git clone -q "$work/package/llama/gitRelease.bundle" "$tp/llama.cpp" 2>/dev/null \
                || die "cannot clone llama/gitRelease.bundle from $tgz"
            cp "$work/package/llama/llama.cpp.info.json" "$tp/llama.cpp/.pipit-release.json"
            ;;
        @node-llama-cpp/linux-x64)
            mkdir -p "$tp/llama-bin"
            cp -a "$work/package/bins/linux-x64/." "$tp/llama-bin/"
            rm -f "$tp/llama-bin/llama-addon.node"
            ;;
    esac
    rm -rf "$work"
done < "$root/scripts/deps.lock"

[ -f "$tp/llama.cpp/include/llama.h" ] || die "llama.h missing after unpacking"
[ -f "$tp/llama-bin/libllama.v0.4.0.so" ] || die "libllama missing after unpacking"
touch "$stamp"
say "third_party ready"
