#!/bin/sh
# includes.sh SRC_DIR [OBJECT ...] - the dependency picture of src/ (docs/design.md): lists the
# #include edges between its files and fails when they form a circle, or when a file other than
# engine.c includes llama.h. Given the library's objects (src/x.c.o), it does the same for calls
# between modules (a module is x.c with its header): a -> b when a's object uses a symbol b's
# defines, which also sees calls through the public pipit.h that the include edges cannot.
set -eu
src=$1
shift
objs=""
for o in "$@"; do
    [ -f "$o" ] || { echo "includes: no object $o"; exit 1; }
    objs="$objs $(cd "$(dirname "$o")" && pwd)/$(basename "$o")"
done
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
        function mod(l) { l = substr(l, 1, index(l, ":") - 1); sub(/.*\/src\//, "", l); sub(/\.c\.o$/, "", l); sub(/\.o$/, "", l); return l }
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
# the check itself: a graph with a circle must be refused
printf 'a b\nb a\n' | tsort >/dev/null 2>&1 && { echo "includes: tsort misses a circle"; exit 1; }
exit $status
