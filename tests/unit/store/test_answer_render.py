"""The answer in a report: Markdown rendered, raw HTML escaped, citations linked to
the quoted passage (HTML) or kept as written (Markdown)."""

from __future__ import annotations

from core.exports.answer_render import answer_html, answer_markdown, shift_headings

DOCS = [{"path": "log.txt", "text": "first line\nthe card payment failed\nthird\n", "spans": ()}]


def test_headings_move_below_the_report_and_code_fences_are_left_alone():
    assert shift_headings("# A\n```\n# not a heading\n```\n## B") == "### A\n```\n# not a heading\n```\n#### B"
    assert answer_markdown("# T <script>x</script> [doc:log.txt:line 2]") == \
        "### T &lt;script>x&lt;/script> [doc:log.txt:line 2]"


def test_html_renders_markdown_and_links_citations_to_passages():
    body, passages = answer_html("## Outage\n\n**Failed** [doc:log.txt:line 2]; again [doc:log.txt:line 2] "
                                 "and [doc:log.txt:line 9].\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
                                 "<script>alert(1)</script>", DOCS)
    assert "<h4>Outage</h4>" in body and "<strong>Failed</strong>" in body and "<table>" in body
    assert body.count('href="#cite-1"') == 2 and "cite-2" not in body          # one passage per citation
    assert 'class="cite bad"' in body and "line 9 ⚠" in body
    assert "<script>" not in body and "&lt;script&gt;" in body
    assert [(p.anchor, p.text) for p in passages] == [("cite-1", "the card payment failed")]


def test_without_documents_citations_stay_text():
    body, passages = answer_html("See [doc:log.txt:line 2].")
    assert "[doc:log.txt:line 2]" in body and not passages
