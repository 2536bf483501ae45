#!/bin/sh
# includes.sh SRC_DIR [OBJECT ...] [--tools OBJECT ...] - the dependency picture of src/
# (docs/design.md): lists the #include edges between its files and fails when they form a
# circle, or when a file other than engine.c includes llama.h. Given the libraries' objects
# (.../src/x.c.o, .../train/x.c.o), it does the same for calls between modules (a module is x.c
# with its header): a -> b when a's object uses a symbol b's defines, which also sees calls
# through the public pipit.h that the include edges cannot.
# The objects after --tools are the tooling's (libpipit-tools), the ones before the runtime's
# (libpipit): the layers point one way, so it also fails when a runtime object uses a symbol a
# tooling object defines, or a runtime file (x.c or its x.h) includes a tooling header
# (pipit_tools.h, or the header beside a tooling x.c).
set -eu
export LC_ALL=C
src=$1
shift
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
objs=""
rt_objs=""
tool_objs=""
layer=runtime
for o in "$@"; do
    if [ "$o" = --tools ]; then
        layer=tools
        continue
    fi
    [ -f "$o" ] || { echo "includes: no object $o"; exit 1; }
    o=$(abs "$o")
    objs="$objs $o"
    if [ $layer = runtime ]; then rt_objs="$rt_objs $o"; else tool_objs="$tool_objs $o"; fi
done
root=$(cd "$src/.." && pwd)
set -- $objs
cd "$src"
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
files=$(find . -name '*.[ch]' | sed 's|^\./||' | sort)
# one awk for every file: "file included-file" when the included file is in src/
awk -v files="$files" '
    BEGIN { n = split(files, f, "\n"); for (i = 1; i <= n; i++) have[f[i]] = 1 }
    /^[ \t]*#[ \t]*include[ \t]*"/ {
        inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
        file = FILENAME; sub(/^\.\//, "", file)
        dir = file; if (!sub(/\/[^\/]*$/, "", dir)) dir = "."
        to = (dir == "." ? inc : dir "/" inc)
        if (!(to in have)) to = inc
        if (!(to in have)) next
        print file, to
    }' $files >"$edges"
sort -u -o "$edges" "$edges"
echo "includes: $(wc -l <"$edges") include edges between the files of $src"
status=0
if ! tsort "$edges" >/dev/null 2>&1; then
    echo "includes: the include graph has a circle:"
    tsort "$edges" 2>&1 >/dev/null | sed 's/^/  /' || true
    status=1
fi
llama=$(grep -l '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]llama\.h[>"]' $(find . -name '*.[ch]') |
            sed 's|^\./||' | grep -v '^engine\.c$' || true)
if [ -n "$llama" ]; then
    echo "includes: llama.h included outside engine.c: $llama"
    status=1
fi
if [ $# -gt 0 ]; then
    defs=$(mktemp)
    calls=$(mktemp)
    trap 'rm -f "$edges" "$defs" "$calls"' EXIT
    # nm -A: "object: [address] type symbol"; one nm for the definitions, one for the uses
    nm -A --defined-only -g "$@" >"$defs"
    nm -A -u "$@" | awk -v defs="$defs" '
        function mod(l) { l = substr(l, 1, index(l, ":") - 1); sub(/.*\.dir\//, "", l); sub(/^src\//, "", l); sub(/\.c\.o$/, "", l); sub(/\.o$/, "", l); return l }
        BEGIN { while ((getline l < defs) > 0) { n = split(l, f, " "); if (f[n-1] ~ /^[TDRBCV]$/) def[f[n]] = mod(l) } }
        { n = split($0, f, " "); m = mod($0); s = f[n]; if ((s in def) && def[s] != m) print m, def[s] }' |
        sort -u >"$calls"
    echo "includes: $(wc -l <"$calls") call edges between the modules of $# objects"
    if ! tsort "$calls" >/dev/null 2>&1; then
        echo "includes: the call graph has a circle:"
        tsort "$calls" 2>&1 >/dev/null | sed 's/^/  /' || true
        status=1
    fi
fi
# the layers: runtime -> tooling never, by symbol or by include
if [ -n "$tool_objs" ]; then
    tdefs=$(mktemp)
    trap 'rm -f "$edges" "${defs:-}" "${calls:-}" "$tdefs"' EXIT
    # shellcheck disable=SC2086
    nm --defined-only -g $tool_objs | awk 'NF == 3 && $2 ~ /^[TDRBCV]$/ { print $3 }' | sort -u >"$tdefs"
    # shellcheck disable=SC2086
    up=$(nm -A -u $rt_objs | awk '{ print $NF, $1 }' | sort -k1,1 | join - "$tdefs" || true)
    if [ -n "$up" ]; then
        echo "includes: the runtime uses the tooling (symbol, object):"
        printf '%s\n' "$up" | sed 's/^/  /'
        status=1
    fi
    # the sources behind the objects (.../<name>.dir/src/x.c.o -> src/x.c), and their headers
    srcof() { for o in "$@"; do echo "$o" | sed 's|.*\.dir/||; s|\.o$||'; done; }
    # shellcheck disable=SC2086
    tool_headers=$( (echo include/pipit_tools.h; srcof $tool_objs | sed 's|\.c$|.h|') |
                    while read -r h; do if [ -f "$root/$h" ]; then echo "$h"; fi; done)
    # shellcheck disable=SC2086
    rt_files=$(srcof $rt_objs | while read -r c; do
                   echo "$c"
                   h=${c%.c}.h
                   if [ -f "$root/$h" ]; then echo "$h"; fi
               done)
    n_rt=$(echo "$rt_files" | grep -c .)
    # one awk over the runtime files: an include is looked for beside the file, in src/ and in
    # include/, as a path from the root with ./ and x/../ taken out
    # shellcheck disable=SC2086
    bad=$(cd "$root" && awk -v tool="$tool_headers" '
        function norm(p) { gsub(/\/\.\//, "/", p); sub(/^\.\//, "", p)
                           while (sub(/[^\/.][^\/]*\/\.\.\//, "", p)) {} return p }
        BEGIN { n = split(tool, t, "\n"); for (i = 1; i <= n; i++) is_tool[t[i]] = 1 }
        /^[ \t]*#[ \t]*include[ \t]*"/ {
            inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
            dir = FILENAME; if (!sub(/\/[^\/]*$/, "", dir)) dir = "."
            split(dir "/" inc " src/" inc " include/" inc, cand, " ")
            for (i = 1; i <= 3; i++) if (norm(cand[i]) in is_tool) { print FILENAME, norm(cand[i]); break }
        }' $rt_files)
    if [ -n "$bad" ]; then
        echo "includes: a runtime file includes a tooling header (file, header):"
        printf '%s\n' "$bad" | sed 's/^/  /'
        status=1
    fi
    [ -n "$up$bad" ] || echo "includes: $n_rt runtime files include no tooling header of $(echo "$tool_headers" | grep -c .)" \
        "and use no symbol of $(wc -l <"$tdefs") the tooling defines"
fi
# the check itself: a graph with a circle must be refused
printf 'a b\nb a\n' | tsort >/dev/null 2>&1 && { echo "includes: tsort misses a circle"; exit 1; }
exit $status
