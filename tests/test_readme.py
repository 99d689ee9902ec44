"""README.md is a user's guide: short, every link it and docs/ hold leads somewhere, no lab notes, and the
commands CI runs are the ones it shows.

Why a test: the README grew into a 649-line lab notebook one measured paragraph at a time; a limit that fails
the suite is what keeps design notes in docs/ and dated measurements in benchmarks/.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_LINES = 250

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (letters, digits, '-', '_' and spaces
    kept), spaces to '-'."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    kept = "".join(ch for ch in text if ch in "-_ " or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in _FENCE.sub("", text).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = _slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(md: Path) -> list[str]:
    """Relative links in ``md`` (code blocks aside) whose file or ``#anchor`` does not exist."""
    text = md.read_text()
    bad = []
    for target in _LINK.findall(_FENCE.sub("", text)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (md.parent / path).resolve() if path else md
        if not dest.exists():
            bad.append(f"{md.relative_to(ROOT)}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text()):
            bad.append(f"{md.relative_to(ROOT)}: {target} (no such heading in {dest.name})")
    return bad


def test_readme_is_short():
    n = len(README.read_text().splitlines())
    assert n <= MAX_LINES, f"README.md has {n} lines (at most {MAX_LINES}): move design notes to docs/"


@pytest.mark.parametrize("md", [README, *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_relative_links_resolve(md):
    assert broken_links(md) == []


def test_link_checker_catches_a_dead_link(tmp_path, monkeypatch):
    """The checker itself can fail: a missing file and a missing heading are both reported."""
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    (tmp_path / "b.md").write_text("# Some `code` title\n")
    md = tmp_path / "a.md"
    md.write_text("[ok](b.md#some-code-title) [gone](c.md) [no anchor](b.md#other) "
                  "[web](https://example.org/x)\n```\n[in code](nowhere.md)\n```\n")
    assert broken_links(md) == ["a.md: c.md (no such file)", "a.md: b.md#other (no such heading in b.md)"]


def test_readme_holds_no_lab_notes():
    """Commit hashes, issue numbers and dated timings belong in benchmarks/<topic>/README.md."""
    text = _FENCE.sub("", README.read_text())
    assert not re.findall(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b", text), "commit hash"
    assert not re.findall(r"[Ii]ssue #?\d+|#\d{2,}\b", text), "issue number"
    assert not re.findall(r"\b20\d\d-\d\d-\d\d\b", text), "a date"


def _bash_blocks(text: str) -> list[str]:
    return [b for b in re.findall(r"^```bash\n(.*?)^```", text, re.M | re.S)]


def test_ci_runs_the_readme_commands_verbatim():
    """.ci/run runs README's first command (install and demo) and then its test commands, as written, in order."""
    blocks = _bash_blocks(README.read_text())
    first, tests = blocks[0].strip(), blocks[1].strip().splitlines()
    install = first.split(" && ")[0]
    assert install == "pip install torch==2.13.0 -e ." and first.endswith("mkb demo"), first
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    runs_first = [i for i, line in enumerate(ci) if line == first or line.startswith(first + " || ")]
    assert runs_first, f".ci/run does not run README's `{first}`"
    for line in tests:
        assert line in ci, f".ci/run does not run README's `{line}`"
    assert runs_first[0] < ci.index(tests[0]) < ci.index(tests[-1])
