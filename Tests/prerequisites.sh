#!/bin/sh
# What the test command needs besides Swift, checked before anything is built: one table of (command or
# file, Debian package, what needs it). The test command (Tests/run-all.sh) runs it first and stops with the one
# line that installs whatever is missing; .ci/run installs that list.
#
#   Tests/prerequisites.sh              exit 0 when all is there, else name what is missing, print the install
#                                       line and exit 2
#   Tests/prerequisites.sh --packages   print the Debian packages missing, one line (empty when none), exit 0
set -eu

# check KIND WHAT PACKAGE WHY: KIND is "command" (found on PATH), "file" (exists) or "venv" (python3 can make the
# private virtual environment of Tests/test-venv.sh, or it exists already).
missing_packages=""
missing_lines=""
check() {
    kind=$1 what=$2 package=$3 why=$4
    case $kind in
        command) command -v "$what" >/dev/null 2>&1 && return 0 ;;
        file) [ -e "$what" ] && return 0 ;;
        venv)
            venv=${REGCODED_TEST_VENV:-${TMPDIR:-/tmp}/regcoded-test-venv}
            [ -x "$venv/bin/python" ] && return 0
            # What `python3 -m venv` needs and Debian ships apart, in python3-venv (venv says so when it is missing).
            command -v python3 >/dev/null 2>&1 && python3 -c "import ensurepip" >/dev/null 2>&1 && return 0
            ;;
    esac
    case " $missing_packages " in *" $package "*) ;; *) missing_packages="${missing_packages:+$missing_packages }$package" ;; esac
    missing_lines="$missing_lines  $what ($package): $why
"
}

check file /usr/include/sqlite3.h libsqlite3-dev "the system SQLite GRDB builds against"
check command sqlite3 sqlite3 "the schema and storage tests read the database"
check command systemd-analyze systemd "unit verification"
check command systemd-socket-activate systemd "socket-activation tests"
check command curl curl "pass-sim over HTTPS and HTTP/2 with a client that is not ours"
check command python3 python3 "the Python client's and the browser tests"
check venv python3-venv python3-venv "a private virtual environment for the Python test tools"
check command chromium chromium "the web console's browser tests"
check command chromedriver chromium-driver "the web console's browser tests"
# nginx lives in /usr/sbin, which a user's PATH may lack.
check file /usr/sbin/nginx nginx "the OAuth test servers over HTTPS (Tests/oauth-servers)"
check command openssl openssl "the OAuth test servers' throwaway CA (Tests/oauth-servers)"

if [ "${1:-}" = --packages ]; then
    echo "$missing_packages"
    exit 0
fi
[ -z "$missing_packages" ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo "
printf 'The tests need what this machine lacks:\n%s' "$missing_lines" >&2
printf 'Install it with:\n  %sapt-get update && %sapt-get install -y %s\n(or run .ci/run, which does so and then the tests)\n' \
    "$sudo" "$sudo" "$missing_packages" >&2
exit 2
