#!/bin/sh
# symbols.sh LIBPIPIT.so - the shared library exports its face and nothing else: every defined
# dynamic symbol starts with pipit_ (no fg_*, strbuf_*, device_* ... from the inside).
set -eu
lib=$1
all=$(nm -D --defined-only "$lib" | awk '{print $3}')
n=$(printf '%s\n' "$all" | grep -c . || true)
bad=$(printf '%s\n' "$all" | grep -v '^pipit_' || true)
echo "symbols: $n exported from $lib"
if [ -n "$bad" ]; then
    echo "symbols: exported without the pipit_ prefix:"
    printf '%s\n' "$bad"
    exit 1
fi
[ "$n" -ge 50 ] || { echo "symbols: too few symbols, is this libpipit?"; exit 1; }
