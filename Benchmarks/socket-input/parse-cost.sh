#!/bin/sh
# CPU per MB of the JSON reader for each heavy shape, on a release (-O, whole-module) build of its sources.
#
#   Benchmarks/socket-input/parse-cost.sh [REV]
#
# Measures the working tree's Sources/RegcodeSupport; with REV, the reader as of that commit too (e.g. `main`).
# Needs only `swiftc`; builds in a temporary directory it removes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
files="JSONValueParser.swift JSONValueParser+Scalars.swift JSONValue.swift InputLimits.swift"

measure() { # label, directory holding the reader's files
    mkdir -p "$work/$1"
    cp "$here/parse-cost.swift" "$work/$1/main.swift"
    set -- "$1" "$2"
    sources=""
    for f in $files; do sources="$sources $2/$f"; done
    # shellcheck disable=SC2086
    swiftc -O -wmo -module-name ParseCost "$work/$1/main.swift" $sources -o "$work/$1/parse-cost"
    echo "### $1"
    echo
    "$work/$1/parse-cost"
    echo
}

echo "cores $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo
if [ $# -ge 1 ]; then
    mkdir -p "$work/src-$1"
    for f in $files; do git -C "$root" show "$1:Sources/RegcodeSupport/$f" > "$work/src-$1/$f"; done
    measure "$1" "$work/src-$1"
fi
measure "working tree" "$root/Sources/RegcodeSupport"
