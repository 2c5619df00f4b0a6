#!/usr/bin/env bash
# A/B of two builds on one benchmark: runs it ROUNDS times for each build, alternating (A B A B …), so a drift of
# the machine falls on both, and prints each run's lines that match PATTERN, labelled.
#
#   Benchmarks/ab.sh A_BIN B_BIN ROUNDS PATTERN SCRIPT [ARGS…]
#   Benchmarks/ab.sh /tmp/old .build-release/release 2 'CPU|lateness|onboarding' Benchmarks/fleet.sh 10000 30 5
#
# A_BIN and B_BIN are folders holding `regcoded` and `pass-sim` (release builds). Each run's whole output is kept
# in $AB_DIR (default a temporary folder, named at the end). Every run is bounded by its script's own limits.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 5 ] || { sed -n 2,9p "$0" >&2; exit 2; }
a=$1 b=$2 rounds=$3 pattern=$4
shift 4
out=${AB_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/regcoded-ab.XXXXXX")}
mkdir -p "$out"
for round in $(seq 1 "$rounds"); do
    for side in A B; do
        bin=$a
        [ "$side" = B ] && bin=$b
        log="$out/$side-$round.txt"
        NO_BUILD=1 BIN="$bin" "$@" >"$log" 2>&1 || echo "$side run $round failed (see $log)" >&2
        grep -E "$pattern" "$log" | sed "s/^/$side$round  /"
    done
done
echo "runs kept in $out"
