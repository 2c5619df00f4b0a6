#!/bin/sh
# Installs the Python client with its pytest extra into a private virtual environment and runs its tests
# against a real regcoded. REGCODED_BIN defaults to the regcoded of `swift build --show-bin-path` (build it first).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
. "$root/Tests/test-venv.sh"
"$python" -m pip install -q "./clients/python[pytest]"
# The package as it is now, even when this version number is installed already.
"$python" -m pip install -q --force-reinstall --no-deps ./clients/python
if [ -z "${REGCODED_BIN:-}" ]; then
    REGCODED_BIN="$(swift build --show-bin-path)/regcoded"
    export REGCODED_BIN
fi
if [ ! -x "$REGCODED_BIN" ]; then
    echo "run-tests.sh: $REGCODED_BIN is not an executable; run swift build first or set REGCODED_BIN" >&2
    exit 1
fi
REGCODED_BIN=$(cd "$(dirname "$REGCODED_BIN")" && pwd)/$(basename "$REGCODED_BIN")
export REGCODED_BIN
# From tests/, so that `import regcoded` is the installed package, not the source folder.
cd "$here/tests"
exec "$python" -m pytest -q -p no:cacheprovider . "$@"
