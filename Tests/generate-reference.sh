#!/bin/sh
# Writes the generated pages of docs/reference — configuration.md (the configuration key table), command-line.md
# (every executable's flags, from swift-argument-parser's own model) and control-methods.md (the control method
# table) — with the hidden `regcoded --generate-reference DIR`, after building the three executables.
# With --check it writes them into a temporary directory instead and fails, naming each committed page that
# differs and the command that regenerates it.
set -eu
cd "$(dirname "$0")/.."
check=false
case "${1:-}" in
--check) check=true ;;
"") ;;
*)
    echo "usage: sh Tests/generate-reference.sh [--check]" >&2
    exit 64
    ;;
esac
for product in regcoded regcodectl pass-sim; do
    swift build --product "$product" >/dev/null
done
bin="$(swift build --show-bin-path)"
if ! $check; then
    "$bin/regcoded" --generate-reference docs/reference
    exit 0
fi
fresh="$(mktemp -d)"
trap 'rm -rf "$fresh"' EXIT
"$bin/regcoded" --generate-reference "$fresh"
stale=0
for page in configuration.md command-line.md control-methods.md app-events.md oauth-events.md oauth-providers.md; do
    if ! cmp -s "$fresh/$page" "docs/reference/$page"; then
        echo "docs/reference/$page is stale: regenerate it with sh Tests/generate-reference.sh and commit it" >&2
        diff -u "docs/reference/$page" "$fresh/$page" | head -n 40 >&2 || true
        stale=1
    fi
done
exit "$stale"
