# Sourced by the test scripts: a private virtual environment for the Python test tools, so that nothing is
# installed into the system's Python. REGCODED_TEST_VENV chooses where (default: $TMPDIR/regcoded-test-venv).
# After sourcing, $python is the environment's interpreter.
venv=${REGCODED_TEST_VENV:-${TMPDIR:-/tmp}/regcoded-test-venv}
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" || {
        echo "cannot make a virtual environment in $venv (Debian: apt-get install python3-venv)" >&2
        exit 1
    }
fi
python="$venv/bin/python"
export PIP_DISABLE_PIP_VERSION_CHECK=1
