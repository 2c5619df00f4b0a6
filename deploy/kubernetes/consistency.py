"""Checks what the Kubernetes schemas cannot: the manifests, the configuration and the Containerfile agree.

Every container runs an image the Containerfile builds, a binary the image holds, as the image's non-root
user, on a read-only root file system, with liveness and readiness probes whose ports and binaries exist;
the configuration's backend is a Service these manifests define, on a port it serves. Exits 1 naming each
disagreement. Run by check.sh (needs PyYAML, which kubernetes-validate brings).
"""

import os
import re
import sys
import urllib.parse

import yaml

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
problems = []

documents = []
for name in sorted(os.listdir(here)):
    if name.endswith(".yaml"):
        with open(os.path.join(here, name)) as handle:
            documents += [(name, document) for document in yaml.safe_load_all(handle) if document]

with open(os.path.join(root, "Containerfile")) as handle:
    containerfile = handle.read()
image_binaries = set(re.findall(r'show-bin-path\)/([\w-]+)"', containerfile))
image_user = re.search(r"^USER (\d+):(\d+)", containerfile, re.MULTILINE)
built_tag = re.search(r"build -t (\S+) -f Containerfile", containerfile)
if not image_binaries or not image_user or not built_tag:
    problems.append("Containerfile: cannot read its binaries, USER or build command")

services = {}
for name, document in documents:
    if document["kind"] == "Service":
        services[document["metadata"]["name"]] = [port["port"] for port in document["spec"]["ports"]]

for name, document in documents:
    if document["kind"] not in ("Deployment", "StatefulSet"):
        continue
    pod = document["spec"]["template"]["spec"]
    where = "%s %s" % (name, document["metadata"]["name"])
    security = pod.get("securityContext", {})
    if image_user and (str(security.get("runAsUser")), str(security.get("runAsGroup"))) != image_user.groups():
        problems.append("%s: runs as %s:%s, the image's USER is %s:%s" % ((where, security.get("runAsUser"),
                        security.get("runAsGroup")) + image_user.groups()))
    for container in pod["containers"]:
        label = "%s container %s" % (where, container["name"])
        if built_tag and container["image"] != built_tag.group(1):
            problems.append("%s: image %s is not the one the Containerfile's build command tags (%s)"
                            % (label, container["image"], built_tag.group(1)))
        binary = os.path.basename(container.get("command", ["/usr/local/bin/regcoded"])[0])
        if binary not in image_binaries:
            problems.append("%s: runs %s, which the image does not hold (%s)" % (label, binary, sorted(image_binaries)))
        if not container.get("securityContext", {}).get("readOnlyRootFilesystem"):
            problems.append("%s: the root file system is writable" % label)
        ports = {port["name"] for port in container.get("ports", [])} | {port["containerPort"] for port in container.get("ports", [])}
        for kind in ("livenessProbe", "readinessProbe"):
            probe = container.get(kind)
            if probe is None:
                problems.append("%s: no %s" % (label, kind))
            elif "httpGet" in probe and probe["httpGet"]["port"] not in ports:
                problems.append("%s: %s probes port %s, which the container does not name" % (label, kind, probe["httpGet"]["port"]))
            elif "exec" in probe and os.path.basename(probe["exec"]["command"][0]) not in image_binaries:
                problems.append("%s: %s runs %s, which the image does not hold" % (label, kind, probe["exec"]["command"][0]))

for name, document in documents:
    if document["kind"] != "ConfigMap":
        continue
    for key, text in document.get("data", {}).items():
        backend = (yaml.safe_load(text) or {}).get("backend")
        if not backend:
            continue
        url = urllib.parse.urlsplit(backend)
        port = url.port or (443 if url.scheme == "https" else 80)
        if url.hostname not in services:
            problems.append("%s %s: backend %s is not a Service of these manifests (%s)" % (name, key, backend, sorted(services)))
        elif port not in services[url.hostname]:
            problems.append("%s %s: backend %s, but Service %s serves %s" % (name, key, backend, url.hostname, services[url.hostname]))

for problem in problems:
    print("consistency: " + problem, file=sys.stderr)
print("consistency: %d manifests, %d problems" % (len(documents), len(problems)))
sys.exit(1 if problems else 0)
