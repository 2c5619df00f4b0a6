#!/bin/sh
# Every suite, as CI runs them: the formatting check, the Swift tests, the check of docs/reference's generated
# pages, the Python client's tests and the web console's browser tests (both against the regcoded just built),
# and the Kubernetes manifests. Python tools go into a private virtual environment (Tests/test-venv.sh), never
# the system's Python.
# Needs: Swift 6, libsqlite3-dev, sqlite3, systemd's tools, curl, python3-venv, chromium, chromium-driver, nginx,
# openssl.
set -eu
cd "$(dirname "$0")/.."
# Before anything is built: what is missing, and the one line that installs it.
sh Tests/prerequisites.sh
swift format lint --strict --recursive --configuration .swift-format Sources Tests Package.swift
# Package.swift and the import lines agree, both ways.
python3 Tests/check-imports.py
# Every relative link of the documentation resolves, and README.md stays short.
python3 Tests/check-docs.py
swift test
# The generated pages of docs/reference match the code they are generated from.
sh Tests/generate-reference.sh --check
REGCODED_BIN="$(swift build --show-bin-path)/regcoded"
export REGCODED_BIN
sh clients/python/run-tests.sh
# The OAuth device-flow servers of other projects (django-oauth-toolkit, Authlib), end to end with curl.
sh Tests/oauth-servers/check.sh
sh Tests/browser/run-tests.sh
sh deploy/kubernetes/check.sh
