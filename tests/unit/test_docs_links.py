"""Every relative link and #anchor in README.md and docs/*.md resolves, and the README
stays short (issue 15 item 5: a README a newcomer finishes; the rest lives in docs/).

Anchors are GitHub's: the heading's text, lowercase, every character that is not a
letter, digit, '_', '-' or space dropped, spaces turned into '-'; a repeated heading
gets '-1', '-2', ... in order."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_LIMIT = 6 * 1024        # what it is, the two commands, the first minute, where to read more

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def prose_lines(text: str):
    """(line number, line) outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = None
            continue
        if fence is None:
            yield number, line


def slug(heading: str) -> str:
    text = INLINE_CODE.sub(lambda m: m.group(2), heading)
    text = LINK.sub(lambda m: m.group(1), text)
    text = re.sub(r"<[^>]+>", "", text)
    text = text.strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in "_- ")
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(text):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(text: str):
    for number, line in prose_lines(text):
        for m in LINK.finditer(INLINE_CODE.sub("", line)):
            yield number, m.group(2)


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """Every relative link of one Markdown file that does not resolve, as 'file:line: why'."""
    problems = []
    text = path.read_text(encoding="utf-8")
    for number, target in links(text):
        where = f"{path.relative_to(root)}:{number}: {target}"
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):      # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        try:
            dest.relative_to(root)
        except ValueError:
            problems.append(f"{where}: points outside the repository")
            continue
        if not dest.exists():
            problems.append(f"{where}: no such file")
            continue
        if anchor:
            if dest.suffix.lower() != ".md" or dest.is_dir():
                problems.append(f"{where}: an anchor into something that is not Markdown")
            elif anchor not in anchors(dest.read_text(encoding="utf-8")):
                problems.append(f"{where}: no heading with that anchor in {dest.relative_to(root)}")
    return problems


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "dev").glob("*.md"))]


def test_slug_follows_github():
    # Headings of the old README whose anchors GitHub rendered in its table of contents.
    assert slug("Documents in: what RLM Studio reads, and what it skips") == \
        "documents-in-what-rlm-studio-reads-and-what-it-skips"
    assert slug("The run view: watching a run, and replaying it") == \
        "the-run-view-watching-a-run-and-replaying-it"
    assert slug("Your runs: where they live, export, back-up") == "your-runs-where-they-live-export-back-up"
    assert slug("Local models (Ollama, LM Studio, llama.cpp, vLLM)") == \
        "local-models-ollama-lm-studio-llamacpp-vllm"
    assert slug("`.rlmignore`") == "rlmignore"
    assert slug("Settings (Ctrl+,)") == "settings-ctrl"


def test_repeated_headings_get_numbered_anchors_and_code_is_not_a_heading():
    text = "# A\n## For developers\n```\n# not a heading\n```\n## For developers\n"
    assert anchors(text) == {"a", "for-developers", "for-developers-1"}


def test_the_checker_finds_broken_links(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Title\n## Real part\n", encoding="utf-8")
    page = tmp_path / "README.md"
    page.write_text("[ok](docs/a.md#real-part) [ok too](#top) `[not a link](nowhere.md)`\n"
                    "[gone](docs/b.md) [bad anchor](docs/a.md#unreal) [web](https://example.com)\n"
                    "# Top\n```\n[in code](missing.md)\n```\n", encoding="utf-8")
    problems = broken_links(page, tmp_path)
    assert len(problems) == 2, problems
    assert "docs/b.md: no such file" in problems[0]
    assert "docs/a.md#unreal: no heading" in problems[1]


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_and_anchor_resolves(path):
    assert broken_links(path) == []


def test_readme_is_short():
    size = (ROOT / "README.md").stat().st_size
    assert size < README_LIMIT, f"README.md is {size:,} bytes; move detail into docs/ (limit {README_LIMIT:,})"


def test_every_docs_page_is_in_the_index():
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    linked = {target.partition("#")[0] for _, target in links(index)}
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"README.md"}
    assert pages - linked == set()


def test_the_readme_keeps_the_two_quick_start_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "./scripts/start.sh" in text and "./scripts/test.sh" in text
    for script in ("scripts/start.sh", "scripts/test.sh"):
        assert (ROOT / script).exists()


# ---- user pages say what the product does now ------------------------------------------------
# docs/*.md are user pages: no issue numbers, no history of rounds; measurements and their
# history live in docs/dev/. A page stays short enough to read (about 15 KB).
USER_PAGE_LIMIT = 16 * 1024
HISTORY = re.compile(r"\bissues?\s+#?\d+|(?<![\w&/])#\d+\b|\bbefore/after\b|\bbefore and after\b", re.I)


def history_lines(text: str) -> list[str]:
    """Lines (outside code) that name an issue or narrate a before/after."""
    return [f"{n}: {line.strip()[:100]}" for n, line in prose_lines(text)
            if HISTORY.search(INLINE_CODE.sub("", line))]


def user_pages() -> list[Path]:
    return sorted((ROOT / "docs").glob("*.md"))


def test_the_history_rule_finds_what_it_forbids():
    text = ("Fixed in issue 28 item 2.\nSee #28.\n## Before and after\nbefore/after\n"
            "[a](#top) &#39; `issue 4` C#7\n```\nissue 9\n```\n")
    assert [line.split(":")[0] for line in history_lines(text)] == ["1", "2", "3", "4"]


@pytest.mark.parametrize("path", user_pages(), ids=lambda p: p.name)
def test_user_pages_carry_no_issue_numbers_or_before_after(path):
    assert history_lines(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("path", user_pages(), ids=lambda p: p.name)
def test_user_pages_stay_short(path):
    size = path.stat().st_size
    assert size <= USER_PAGE_LIMIT, f"{path.name} is {size:,} bytes; move measurements and history to docs/dev/"
