#!/bin/sh
# install.sh BUILD_DIR SOURCE_DIR MODEL - pipit installed like any C library:
#   1. `cmake --install` into a temporary prefix (what `make install PREFIX=...` does);
#   2. every program in examples/ and the usage example cut out of include/pipit.h's opening
#      comment are built against that copy with `pkg-config --cflags --libs pipit` and nothing
#      else, then run on MODEL (no LD_LIBRARY_PATH: the rpaths must find everything);
#   3. a program of the tooling (pipit_tools.h) is built with `pkg-config --cflags --libs
#      pipit-tools` and runs: libpipit-tools.so.0 on top of libpipit.so.0;
#   4. the installed `pipit` command runs.
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
# the tooling: a simulated camera (pipit_device_init) and the test-model shapes
cat >"$tmp/tools-example.c" <<'C'
#include "pipit_tools.h"

#include <stdio.h>

int main(int argc, char **argv) {
    struct pipit_error err = {0};
    struct pipit_toolset *tools = NULL;
    struct pipit_device *camera = NULL;
    size_t n = 0;
    pipit_model_shapes(&n);
    if (argc < 2 || pipit_toolset_load_file(argv[1], &tools, &err) != PIPIT_OK ||
        pipit_device_init("camera", tools, "{\"zoom\": 2}", &camera, &err) != PIPIT_OK) {
        fprintf(stderr, "%s\n", err.text);
        return 1;
    }
    char *state = pipit_device_state_json(camera);
    printf("%zu shapes; %s: %s\n", n, pipit_device_name(camera), state);
    pipit_free(state);
    pipit_device_free(camera);
    pipit_toolset_free(tools);
    return 0;
}
C
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror "$tmp/tools-example.c" $(pkg-config --cflags --libs pipit-tools) \
    -o "$tmp/tools-example"
echo "built tools-example"
"$tmp/tools-example" "$src/tools/camera.json" | tee "$tmp/tools-out"
grep -q '^[1-9][0-9]* shapes; camera: {.*"zoom": *2' "$tmp/tools-out" ||
    { echo "install: the tooling example said something else"; exit 1; }
ldd "$tmp/tools-example" | grep -q 'libpipit-tools\.so\.0 => '"$tmp"/prefix ||
    { echo "install: the tooling example does not run on the installed libpipit-tools.so.0"; exit 1; }
"$tmp/prefix/bin/pipit" --version
"$tmp/prefix/bin/pipit" tools check "$src/tools/camera.json" >/dev/null
echo "install: ok"
