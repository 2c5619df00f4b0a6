#!/bin/sh
# Validates every manifest here against the Kubernetes JSON schemas, offline and strictly (an
# unknown field fails), with kubernetes-validate from PyPI installed into a private virtualenv.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
venv=${KUBERNETES_VALIDATE_VENV:-${TMPDIR:-/tmp}/regcoded-kubernetes-validate}
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet 'kubernetes-validate>=1.28'
fi
# 1.28: the first release that sets the apps.kubernetes.io/pod-index label the StatefulSet reads.
for version in 1.28.0 1.37.0; do
    "$venv/bin/kubernetes-validate" --strict --kubernetes-version "$version" "$here"/*.yaml
done
# What the schemas cannot see: image, binaries, user, probes and the backend Service agree with each other
# and with the Containerfile.
"$venv/bin/python" "$here/consistency.py"
