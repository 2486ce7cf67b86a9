#!/bin/sh
# The compiled-piece cache (--cache-dir) with tests/plugins/plugin_cache.c:
# the first session compiles and stores the piece, the second imports it
# and gives the same outputs; a blob for another compatibility string, a
# damaged one and one cut short are ignored with a warning naming why, and
# the piece is compiled; a cache directory that does not exist is an error.
# usage: run_piece_cache.sh TESSERA PLUGIN.so MODEL WORKDIR
set -u
tessera=$1 plugin=$2 model=$3 work=$4
rm -rf "$work" && mkdir -p "$work/cache" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
run() { # run NAME [options]: stderr in $work/NAME.err, outputs in $work/NAME/
    name=$1; shift
    "$tessera" run "$model" -p "$plugin,reference" --cache-dir "$work/cache" --log-level info \
        -o "$work/$name" "$@" >"$work/$name.out" 2>"$work/$name.err" || fail "$name: exit $? ($(cat "$work/$name.err"))"
}
has() { grep -q "$2" "$work/$1.err" || fail "$1: no '$2' in: $(cat "$work/$1.err")"; }
hasnt() { ! grep -q "$2" "$work/$1.err" || fail "$1: '$2' in: $(cat "$work/$1.err")"; }
same() { cmp -s "$work/first/$2" "$work/$1/$2" || fail "$1: output $2 differs from the first run's"; }

run first
has first "compiled 'relu0'"
blob=$(ls "$work"/cache/cache-*.tsrpiece 2>/dev/null)
[ "$(echo "$blob" | wc -w)" = 1 ] || fail "one blob file expected in the cache, got: $blob"
out=$(ls "$work/first")
[ -n "$out" ] || fail "first run wrote no output"

run second
has second "imported 'relu0'"
has second "imported from"
hasnt second "compiled 'relu0'"
for f in $out; do same second "$f"; done

# another driver or library version: the blob is not for it
run other --provider-option cache:compat=cache-test-2
has other "not used (written for 'cache-test 1', this provider is 'cache-test-2')"
has other "compiled 'relu0'"
for f in $out; do same other "$f"; done
# which replaced the blob: back to the first version, which replaces it again
run back
has back "not used (written for 'cache-test-2', this provider is 'cache-test 1')"
run second_again
has second_again "imported 'relu0'"

# a flipped byte in the blob (just before the trailing 8-byte checksum)
cp "$blob" "$work/good"
size=$(wc -c <"$blob")
printf 'X' | dd of="$blob" bs=1 seek=$((size - 9)) conv=notrunc 2>/dev/null
run damaged
has damaged "damaged (its checksum does not match)"
has damaged "compiled 'relu0'"
for f in $out; do same damaged "$f"; done

# cut short; the compile above rewrote the blob, so cut the good copy
head -c $((size - 20)) "$work/good" >"$blob"
run cut
has cut "cut short"
has cut "compiled 'relu0'"

# not a blob at all
echo "hello" >"$blob"
run foreign
has foreign "not a Tessera compiled-piece file"

# and after all that the stored blob is good again
run again
has again "imported 'relu0'"

# a cache directory that is not there is the caller's mistake
if "$tessera" run "$model" -p "$plugin,reference" --cache-dir "$work/nowhere" >"$work/nowhere.out" 2>"$work/nowhere.err"; then
    fail "--cache-dir of a missing directory was accepted"
fi
has nowhere "is not a directory"
echo "piece cache: ok"
