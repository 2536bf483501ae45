#!/bin/sh
# install.sh BUILD_DIR SOURCE_DIR MODEL - pipit installed like any C library:
#   1. `cmake --install` into a temporary prefix (what `make install PREFIX=...` does);
#   2. every program in examples/ and the usage example cut out of include/pipit.h's opening
#      comment are built against that copy with `pkg-config --cflags --libs pipit` and nothing
#      else, then run on MODEL (no LD_LIBRARY_PATH: the rpaths must find everything);
#   3. the installed `pipit` command runs.
set -eu
build=$1
src=$2
model=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pipit-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
pc=$(find "$tmp/prefix" -name pipit.pc)
[ -n "$pc" ] || { echo "install: no pipit.pc installed"; exit 1; }
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
unset LD_LIBRARY_PATH || true
flags=$(pkg-config --cflags --libs pipit)
cc=${CC:-cc}

# the header's usage example: the indented program between '#include "pipit.h"' and the
# first line that is only '}' in the opening comment
sed -n '1,/^#ifndef PIPIT_H/p' "$tmp/prefix/include/pipit.h" |
    sed -n '/^ \*     #include "pipit.h"$/,/^ \*     }$/p' | sed 's/^ \*     //; s/^ \*$//' \
    >"$tmp/header-example.c"
[ "$(wc -l <"$tmp/header-example.c")" -gt 20 ] || { echo "install: no usage example in pipit.h"; exit 1; }
for f in "$src"/examples/*.c "$tmp/header-example.c"; do
    name=$(basename "$f" .c)
    # shellcheck disable=SC2086
    "$cc" -std=c11 -Wall -Wextra -Werror "$f" $flags -o "$tmp/$name"
    echo "built $name"
done

cd "$src"
out=$("$tmp/header-example")
echo "$out"
[ "$(printf '%s\n' "$out" | grep -c .)" -ge 2 ] || { echo "install: header example said too little"; exit 1; }
"$tmp/embed" "$model" "$src/tools/camera.json" "zoom in to 2x" "never mind" | grep -q "> never mind"
echo "ran embed"
"$tmp/prefix/bin/pipit" --version
"$tmp/prefix/bin/pipit" tools check "$src/tools/camera.json" >/dev/null
echo "install: ok"
