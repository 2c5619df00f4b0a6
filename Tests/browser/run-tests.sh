#!/bin/sh
# Browser tests of the web console: a real regcoded, headless Chromium through chromium-driver.
# Needs chromium and chromium-driver (Debian: apt-get install chromium chromium-driver).
# REGCODED_BIN defaults to the regcoded of `swift build`.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

. "$root/Tests/test-venv.sh"
"$python" -m pip install -q selenium pytest

if [ -z "${REGCODED_BIN:-}" ]; then
    REGCODED_BIN="$(cd "$root" && swift build --show-bin-path)/regcoded"
    if [ ! -x "$REGCODED_BIN" ]; then
        (cd "$root" && swift build --product regcoded)
    fi
fi
if [ ! -x "$REGCODED_BIN" ]; then
    echo "run-tests.sh: $REGCODED_BIN is not an executable; build it first (swift build)" >&2
    exit 1
fi
export REGCODED_BIN
: "${TMPDIR:=/tmp}"
export TMPDIR
export PYTHONDONTWRITEBYTECODE=1  # leave no __pycache__ in the source tree

cd "$here"
exec "$python" -m pytest -p no:cacheprovider -q "$@" .
