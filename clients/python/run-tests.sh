#!/bin/sh
# Installs the Python client with pytest and runs its tests against a real regcoded.
# REGCODED_BIN defaults to the regcoded of `swift build --show-bin-path` (build it first).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
python3 -m pip install -q ./clients/python pytest
if [ -z "${REGCODED_BIN:-}" ]; then
    REGCODED_BIN="$(swift build --show-bin-path)/regcoded"
    export REGCODED_BIN
fi
if [ ! -x "$REGCODED_BIN" ]; then
    echo "run-tests.sh: $REGCODED_BIN is not an executable; run swift build first or set REGCODED_BIN" >&2
    exit 1
fi
# From tests/, so that `import regcoded` is the installed package, not the source folder.
cd "$here/tests"
exec python3 -m pytest -q -p no:cacheprovider . "$@"
