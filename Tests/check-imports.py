#!/usr/bin/env python3
"""Package.swift and the `import` lines agree, both ways.

For every target of the package (`swift package dump-package`): each module its sources import is a dependency it
declares (a target of the package or a product of a dependency), and each dependency it declares is imported by at
least one of its sources. Modules of the toolchain (Foundation, Glibc, Synchronization, Testing, …) need no
declaration. A module reachable only through another target's dependencies is not declared, which is what this
catches. Prints every disagreement and exits 1; exits 0 when there is none.

    Tests/check-imports.py            (from the package root; standard library only)
"""

import json
import os
import re
import subprocess
import sys

TOOLCHAIN = {
    "Foundation", "FoundationNetworking", "FoundationEssentials", "FoundationXML", "Glibc", "Musl", "Darwin",
    "Dispatch", "Synchronization", "Testing", "XCTest", "_Concurrency", "CoreFoundation", "os", "WinSDK",
    "Android", "Observation", "RegexBuilder", "_StringProcessing", "Distributed",
}
# An `import` line: attributes and access modifiers, an optional kind (`import struct M.T`), the module.
IMPORT = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+"
    r"(?:(?:struct|class|enum|protocol|typealias|func|var|let)\s+)?([A-Za-z_][A-Za-z0-9_]*)"
)


def main():
    root = os.getcwd()
    package = json.loads(subprocess.run(["swift", "package", "dump-package"], check=True, capture_output=True, text=True).stdout)
    local = {target["name"] for target in package["targets"]}
    # Executables a test target lists so that they are built before it runs: never imported.
    executables = {target["name"] for target in package["targets"] if target["type"] == "executable"}
    problems = []
    used_packages = set()
    for target in package["targets"]:
        if target["type"] in ("system", "binary", "plugin", "macro"):
            continue
        name = target["name"]
        path = target.get("path") or os.path.join("Tests" if target["type"] == "test" else "Sources", name)
        declared = {}
        for dependency in target.get("dependencies", []):
            for kind in ("byName", "target", "product"):
                if kind in dependency:
                    module = dependency[kind][0]
                    if kind == "product":
                        used_packages.add((dependency[kind][1] or module).lower())
                    declared[module] = "product" if kind == "product" else "target"
        imported = set()
        for directory, _, files in os.walk(os.path.join(root, path)):
            for file in files:
                if not file.endswith(".swift"):
                    continue
                with open(os.path.join(directory, file), encoding="utf-8") as source:
                    for line in source:
                        match = IMPORT.match(line)
                        if match:
                            imported.add(match.group(1))
        for module in sorted(imported - set(declared) - TOOLCHAIN - {name}):
            where = "a target of the package" if module in local else "a module of a dependency"
            problems.append(f"{name}: imports {module} ({where}) without declaring it in Package.swift")
        for module in sorted(set(declared) - imported - executables):
            problems.append(f"{name}: declares {module} in Package.swift and imports it nowhere")
    for dependency in package.get("dependencies", []):
        for kind in ("sourceControl", "fileSystem", "registry"):
            for entry in dependency.get(kind, []):
                identity = entry.get("identity", "").lower()
                if identity and identity not in used_packages:
                    problems.append(f"Package.swift: depends on package {identity}, whose products no target uses")
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} disagreements between Package.swift and the import lines", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
