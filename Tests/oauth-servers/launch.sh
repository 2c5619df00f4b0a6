#!/bin/sh
# Starts one OAuth device-flow test server on loopback (see launch.py for the options and the JSON line it prints)
# with the Python of the private test venv, which it makes when missing (Tests/test-venv.sh); launch.py installs
# requirements.txt into it when needed. exec: SIGTERM to this process reaches the launcher itself.
#   sh Tests/oauth-servers/launch.sh --server dot|authlib [--tls] [--port N] [--interval S]
set -eu
export PYTHONDONTWRITEBYTECODE=1 # leave no __pycache__ in the source tree
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../test-venv.sh"
exec "$python" "$here/launch.py" "$@"
