#!/usr/bin/env python3
"""The documentation holds together: README.md stays short, and every relative link resolves.

Checks README.md, docs/**/*.md, Benchmarks/README.md and clients/**/README.md:
- README.md is at most 12,288 bytes;
- every relative Markdown link (inline or reference definition) names a file or folder that exists;
- every #anchor, in the same file or another Markdown file, matches a heading by GitHub's slug rules
  (lowercase, punctuation other than - and _ dropped, spaces to -, repeated headings get -1, -2, …).
Links inside fenced code blocks and inline code are not links. http(s) and mailto links are not fetched.
Each broken link is printed as FILE:LINE: target — reason; the exit status is 1 if there is any.
Standard library only.
"""

import os
import re
import sys
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README_LIMIT = 12_288
# Generated in parallel on another branch: a link to one of these may name a file not yet present.
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.DOTALL)
INLINE_LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)", re.MULTILINE)
HTML_ANCHOR = re.compile(r"<a\s+(?:[^>]*\s)?(?:id|name)=[\"']([^\"']+)[\"']", re.IGNORECASE)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def documents():
    found = [os.path.join(ROOT, "README.md")]
    for folder in ("docs", "clients"):
        for directory, subfolders, files in os.walk(os.path.join(ROOT, folder)):
            subfolders[:] = sorted(name for name in subfolders if not name.startswith(".") and name != "node_modules")
            for name in sorted(files):
                if name.endswith(".md") and (folder == "docs" or name == "README.md"):
                    found.append(os.path.join(directory, name))
    found.append(os.path.join(ROOT, "Benchmarks", "README.md"))
    return [path for path in found if os.path.isfile(path)]


def without_code(text):
    """The text with fenced blocks and inline code blanked out, every newline kept, so offsets keep their lines."""
    lines = text.split("\n")
    kept = []
    fence = None
    for line in lines:
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            kept.append("")
        elif fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) and not line.strip()[len(match.group(1)) :].strip():
                fence = None
            kept.append("")
        else:
            kept.append(line)
    prose = "\n".join(kept)
    # A code span does not run over a blank line (a paragraph's end).
    return CODE_SPAN.sub(lambda m: m.group(0) if "\n\n" in m.group(0) else re.sub(r"[^\n]", " ", m.group(0)), prose)


def heading_text(raw):
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", raw)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = text.replace("`", "")
    text = re.sub(r"(\*\*|__|\*)", "", text)
    return text.strip()


def slug(text):
    text = heading_text(text).lower()
    text = "".join(character for character in text if character.isalnum() or character in " -_")
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path in cache:
        return cache[path]
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    lines = text.split("\n")
    found = set()
    counts = {}
    fence = None
    previous = ""

    def add(raw):
        base = slug(raw)
        number = counts.get(base, 0)
        counts[base] = number + 1
        found.add(base if number == 0 else f"{base}-{number}")

    for line in lines:
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            previous = ""
            continue
        if fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            continue
        atx = ATX.match(line)
        if atx:
            add(atx.group(2) or "")
            previous = ""
            continue
        if SETEXT.match(line) and previous.strip() and not previous.lstrip().startswith(("|", "-", "*", ">")):
            add(previous.strip())
            previous = ""
            continue
        for name in HTML_ANCHOR.findall(line):
            found.add(name)
        previous = line
    cache[path] = found
    return found


def check(path, problems, notes):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    prose = without_code(text)
    relative = os.path.relpath(path, ROOT)
    targets = [(m.start(), m.group(2)) for m in INLINE_LINK.finditer(prose)]
    targets += [(m.start(), m.group(1)) for m in REFERENCE_DEFINITION.finditer(prose)]
    for offset, target in sorted(targets):
        line = prose.count("\n", 0, offset) + 1
        target = target.strip()
        if target.startswith("<") and target.endswith(">"):
            target = target[1:-1]
        if not target or SCHEME.match(target):
            continue
        where, _, anchor = target.partition("#")
        where = urllib.parse.unquote(where)
        if where:
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), where))
        else:
            resolved = path
        shown = os.path.relpath(resolved, ROOT)
        if not os.path.exists(resolved):
            problems.append(f"{relative}:{line}: {target} — no such file: {shown}")
            continue
        if not anchor:
            continue
        if not resolved.endswith(".md") or os.path.isdir(resolved):
            continue
        if urllib.parse.unquote(anchor) not in anchors(resolved):
            problems.append(f"{relative}:{line}: {target} — no heading in {shown} has the anchor #{anchor}")


def main():
    problems = []
    notes = set()
    readme = os.path.join(ROOT, "README.md")
    size = os.path.getsize(readme)
    if size > README_LIMIT:
        problems.append(f"README.md:1: README.md — {size} bytes, over the limit of {README_LIMIT}: move detail into docs/")
    checked = documents()
    for path in checked:
        check(path, problems, notes)
    for note in sorted(notes):
        print(note)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-docs: {len(problems)} broken in {len(checked)} files")
        return 1
    print(f"check-docs: {len(checked)} files, every relative link resolves; README.md is {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
