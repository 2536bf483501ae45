#!/bin/sh
# symbols.sh LIBPIPIT.so [LIBPIPIT_TOOLS.so] - each shared library exports its face and nothing
# else: every defined dynamic symbol starts with pipit_ (no fg_*, strbuf_*, device_* ... from
# the inside, and none of the runtime internals libpipit-tools keeps private copies of), and
# no symbol is exported by two of them (the runtime's face is pipit.h, the tooling's
# pipit_tools.h).
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for lib in "$@"; do
    nm -D --defined-only "$lib" | awk '{print $3}' | sort -u >"$tmp/this"
    n=$(grep -c . "$tmp/this" || true)
    echo "symbols: $n exported from $lib"
    bad=$(grep -v '^pipit_' "$tmp/this" || true)
    if [ -n "$bad" ]; then
        echo "symbols: exported without the pipit_ prefix:"
        printf '%s\n' "$bad"
        status=1
    fi
    [ "$n" -ge 40 ] || { echo "symbols: too few symbols, is $lib pipit's?"; status=1; }
    touch "$tmp/earlier"
    both=$(comm -12 "$tmp/earlier" "$tmp/this")
    if [ -n "$both" ]; then
        echo "symbols: exported by $lib and by a library before it:"
        printf '%s\n' "$both"
        status=1
    fi
    sort -u -o "$tmp/earlier" "$tmp/earlier" "$tmp/this"
done
exit $status
