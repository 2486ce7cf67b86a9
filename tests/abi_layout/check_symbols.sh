#!/bin/sh
# Every function ABI v1 exported from libtessera (symbols_v1.txt) is still
# exported by LIB; new ones are fine (listed). The struct layouts are
# check_layout.py's job.
# usage: check_symbols.sh LIB symbols_v1.txt
lib=$1 baseline=$2
now=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort) || exit 1
missing=$(printf '%s\n' "$now" | comm -13 - "$baseline")
added=$(printf '%s\n' "$now" | comm -23 - "$baseline")
[ -n "$added" ] && echo "exported since v1: $(echo $added)"
if [ -n "$missing" ]; then
  echo "ABI BREAK: no longer exported: $(echo $missing)"
  exit 1
fi
echo "$(wc -l < "$baseline") v1 symbols still exported"
