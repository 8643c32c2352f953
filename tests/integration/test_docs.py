"""The documentation a newcomer reads (README.md and docs/*.md): no internal references (issue numbers, paths
outside the repository, source files on user pages), links that resolve, examples that paste (no alternatives
written as a shell pipe), and docs/loop.svg as scripts/gen-loop-svg.py draws it from docs/loop.txt.

No server and no thaw binary needed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
# Pages for developers, where source files belong.
DEVELOPER_PAGES = {"ARCHITECTURE.md", "benchmarks.md"}


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.glob("*.md"))]


def user_pages() -> list[Path]:
    return [p for p in pages() if p.name not in DEVELOPER_PAGES]


def rel(p: Path) -> str:
    return str(p.relative_to(REPO))


def without_code(text: str) -> str:
    """The text with fenced code blocks and inline code spans blanked (line numbers kept)."""
    out, fence = [], None
    for line in text.split("\n"):
        m = re.match(r"^\s*(```+|~~~+)", line)
        if fence is None and m:
            fence = m.group(1)[0] * 3
            out.append("")
        elif fence is not None:
            if line.strip().startswith(fence):
                fence = None
            out.append("")
        else:
            out.append(re.sub(r"(`+)(?:(?!\1).)+?\1", "``", line))
    return "\n".join(out)


def code_blocks(text: str):
    """(info string, first line number, lines) of each fenced code block."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^\s*(```+|~~~+)\s*(\S*)", lines[i])
        if not m:
            i += 1
            continue
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(m.group(1)):
            body.append(lines[i])
            i += 1
        yield m.group(2), start + 1, body
        i += 1


def test_no_issue_numbers():
    """Issue numbers mean nothing to a reader: say what the target or the change is instead."""
    found = [f"{rel(p)}:{n}: {line.strip()}" for p in pages()
             for n, line in enumerate(p.read_text(encoding="utf-8").split("\n"), 1)
             if re.search(r"(?i)\bissues?\s+#?\d+", line)]
    assert not found, "issue numbers in the docs:\n" + "\n".join(found)


LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", re.M)


def test_relative_links_resolve_inside_the_repository():
    """Every link that is not a URL names a file of this repository that exists (anchors are not checked)."""
    bad = []
    for p in pages():
        text = without_code(p.read_text(encoding="utf-8"))
        for n, line in enumerate(text.split("\n"), 1):
            for target in LINK.findall(line) + REFERENCE.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
                    continue  # https:, mailto:, an anchor on the same page
                path = target.split("#", 1)[0].split("?", 1)[0]
                resolved = (p.parent / path).resolve()
                if not resolved.is_relative_to(REPO):
                    bad.append(f"{rel(p)}:{n}: {target} leaves the repository")
                elif not resolved.exists():
                    bad.append(f"{rel(p)}:{n}: {target} does not exist")
    assert not bad, "\n".join(bad)


def test_no_paths_outside_the_repository():
    """A `../…` path, linked or quoted, names a file of this repository (no ../shared/… of a workspace)."""
    bad = []
    for p in pages():
        for n, line in enumerate(p.read_text(encoding="utf-8").split("\n"), 1):
            for path in re.findall(r"(?<![\w./-])(\.\./[^\s`)\]\"'>,;]*)", line):
                resolved = (p.parent / path.split("#", 1)[0]).resolve()
                if not resolved.is_relative_to(REPO) or not resolved.exists():
                    bad.append(f"{rel(p)}:{n}: {path}")
    assert not bad, "paths outside the repository:\n" + "\n".join(bad)


def test_user_pages_name_no_source_files():
    """Source files belong in docs/ARCHITECTURE.md; the user pages say what happens, not where in the code."""
    bad = [f"{rel(p)}:{n}: {line.strip()}" for p in user_pages()
           for n, line in enumerate(p.read_text(encoding="utf-8").split("\n"), 1)
           if re.search(r"src/thaw/|\b[\w/]+\.(?:cc|h)\b", line)]
    assert not bad, "source files on user pages (move them to docs/ARCHITECTURE.md):\n" + "\n".join(bad)


def test_shell_examples_are_not_alternatives():
    """A ```sh block runs as pasted: alternatives (`--snapshot ID | --as-of T`) are separate commands there, and
    grammar with [ ] and | goes in a ```text synopsis."""
    bad = []
    for p in pages():
        for info, first, body in code_blocks(p.read_text(encoding="utf-8")):
            if info not in ("sh", "bash", "shell", "console"):
                continue
            for k, line in enumerate(body):
                if re.search(r"\s\|\s*-{1,2}[A-Za-z]", line) or re.search(r"\s\[--?[A-Za-z][^\]]*\]", line):
                    bad.append(f"{rel(p)}:{first + k}: {line.strip()}")
    assert not bad, "option grammar in shell examples:\n" + "\n".join(bad)


def test_loop_svg_is_generated_from_its_source(tmp_path):
    """docs/loop.svg is what scripts/gen-loop-svg.py makes of docs/loop.txt, and README.md shows it."""
    out = tmp_path / "loop.svg"
    p = subprocess.run([sys.executable, str(REPO / "scripts" / "gen-loop-svg.py"), str(DOCS / "loop.txt"),
                        "-o", str(out)], capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    assert out.read_bytes() == (DOCS / "loop.svg").read_bytes(), \
        "docs/loop.svg is stale: run python3 scripts/gen-loop-svg.py"
    assert "](docs/loop.svg)" in (REPO / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("source, error", [
    ('box a "A" "" at 0,0 size 10x10\narrow a.top -> b.top "x"', "no box 'b'"),
    ('box a "A" "" at 0,0 size 10x10\narrow a.middle -> a.top "x"', "is not ID.SIDE"),
    ("circle a", "unknown statement 'circle'"),
])
def test_loop_svg_generator_names_the_bad_line(tmp_path, source, error):
    src = tmp_path / "bad.txt"
    src.write_text("canvas 100 100\n" + source + "\n")
    p = subprocess.run([sys.executable, str(REPO / "scripts" / "gen-loop-svg.py"), str(src), "-o",
                        str(tmp_path / "bad.svg")], capture_output=True, timeout=60)
    assert p.returncode != 0 and "line " in p.stderr.decode() and error in p.stderr.decode(), p.stderr.decode()
