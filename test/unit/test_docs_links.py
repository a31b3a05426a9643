"""The README is an index within 16 KB, and every relative link in it and in
``docs/`` resolves: the file exists inside the repository and, for a Markdown
target, the ``#anchor`` names one of its headings (GitHub's slugs). Every page of
``docs/`` is reachable from the README, so none is orphaned. External links are
not followed (no network in tests)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
README_LIMIT = 16 * 1024
PAGES = sorted([README, *(ROOT / "docs").glob("*.md")])

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) outside fenced code blocks, with code spans removed."""
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        opened = _FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)[0] * len(opened.group(1))
            continue
        if fence is not None:
            if line.strip().startswith(fence) and set(line.strip()) == {fence[0]}:
                fence = None
            continue
        yield number, _CODE_SPAN.sub("", line)


def links(text: str) -> Iterator[tuple[int, str]]:
    """Every link target: inline links, images and reference definitions."""
    for number, line in prose_lines(text):
        for match in _LINK.finditer(line):
            yield number, match.group(1)
        if reference := _REFERENCE.match(line):
            yield number, reference.group(1)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text, lowercased, without punctuation
    other than ``-`` and ``_``, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a Markdown file's headings (repeats get ``-1``, ``-2``...)."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    fence = None
    for line in text.splitlines():
        opened = _FENCE.match(line)
        if opened:
            fence = None if fence else opened.group(1)
            continue
        if fence or not (heading := _HEADING.match(line)):
            continue
        base = slug(heading.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """``page:line: target: why`` for each relative link of ``page`` that does not resolve."""
    text = page.read_text()
    problems: list[str] = []
    for number, target in links(text):
        if _SCHEME.match(target) or target.startswith("//"):
            continue  # external: not followed
        path_part, _, anchor = target.partition("#")
        where = f"{page.relative_to(root)}:{number}: {target}"
        resolved = (page.parent / path_part).resolve() if path_part else page
        if root.resolve() not in (resolved, *resolved.parents):
            problems.append(f"{where}: outside the repository")
            continue
        if not resolved.exists():
            problems.append(f"{where}: no such file")
            continue
        if anchor and resolved.suffix == ".md" and anchor not in anchors(resolved.read_text()):
            problems.append(f"{where}: no heading with anchor #{anchor}")
    return problems


def test_readme_is_an_index() -> None:
    size = len(README.read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes, more than {README_LIMIT}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    assert not broken_links(page), "\n".join(broken_links(page))


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {
        (README.parent / target.partition("#")[0]).resolve()
        for _, target in links(README.read_text())
        if not _SCHEME.match(target)
    }
    orphans = [str(p.relative_to(ROOT)) for p in PAGES if p != README and p not in linked]
    assert not orphans, f"docs pages the README does not link: {orphans}"


def test_the_checker_finds_broken_links(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# The `gemm-opt` tool\n## cuda:90, the target\n## Twice\n")
    page.write_text(
        "# Title\n## Twice\n## Twice\n"
        "[ok](other.md#the-gemm-opt-tool) [ok](other.md#cuda90-the-target) [ok](#twice-1)\n"
        "[bad anchor](other.md#the-tool) [missing](gone.md) ![img](pic.png)\n"
        "[up](../outside.md) [web](https://example.org/x#y) `[code](gone.md)`\n"
        "```\n[fenced](gone.md)\n```\n"
        "[ref]: missing-ref.md\n"
    )
    (tmp_path / "pic.png").write_bytes(b"")
    assert broken_links(page, tmp_path) == [
        "page.md:5: other.md#the-tool: no heading with anchor #the-tool",
        "page.md:5: gone.md: no such file",
        "page.md:6: ../outside.md: outside the repository",
        "page.md:10: missing-ref.md: no such file",
    ]
