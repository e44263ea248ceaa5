"""The Markdown report: question, answer, models, caps, totals, every turn's reply,
code and output, and the sub-call tree as a nested list."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from core.control_chars import escape_controls
from core.limits import summary
from core.run_names import fork_line, run_heading
from core.store import report as rp
from core.support import unsupported_line
from core.exports.answer_render import answer_markdown
from core.exports.export_citations import check, summary_lines
from core.exports.export_json import write_text_atomically

PROMPT_PREVIEW = 300
RESPONSE_PREVIEW = 600


def fence(text: str, lang: str = "") -> str:
    """A code block whose fence is longer than any backtick run inside the text."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{lang}\n{text.rstrip()}\n{marks}"


def md_text(text: object) -> str:
    """Run text outside code spans: no raw HTML reaches a Markdown renderer."""
    return html.escape("" if text is None else str(text), quote=False).replace("\n", " ")


def one_line(text: str | None, limit: int) -> str:
    flat = " ".join((text or "").split())
    flat = rp.preview(flat, limit)
    return flat.replace("`", "'")


def render(r: rp.Report) -> str:
    run, out = r.run, []
    out.append(f"# {md_text(run_heading(run))}")     # the whole question and its time (core/run_names.py)
    out.append(f"\nRLM Studio run `{run['id']}`")
    if fork_line(r.forked_from):
        out.append(f"\n> **{md_text(fork_line(r.forked_from))}** (run `{r.forked_from.get('run_id')}`)")
    out.append(f"\n**Status:** {md_text(run['status'])}" + (f" — {md_text(run['error'])}" if run.get("error") else ""))
    limited = summary(r.totals.get("limited"))
    if limited:
        out.append(f"\n> **Limited:** {md_text(limited)}")
    question = "\n".join("> " + md_text(line) for line in (run["question"] or "").splitlines())
    out.append(f"\n## Question\n\n{question}")
    out.append("\n## Answer\n\n" + (answer_markdown(run["answer"]) if run.get("answer") is not None
                                    else "_no answer_"))
    if unsupported_line(r.totals):
        out.append(f"\n> **Unsupported:** {md_text(unsupported_line(r.totals))}")
    if run.get("answer") is not None:
        flags = summary_lines(check(run["answer"], r.documents if r.texts_stored else None))
        if flags:
            out.append("\n**Unresolved citations**\n")
            out.extend(f"- {md_text(line)}" for line in flags)
    out.append("\n## Models and caps\n")
    out.append(f"- root model: {md_text(r.model_line('root'))}\n- sub model: {md_text(r.model_line('sub'))}")
    out.extend(f"- {label}: {md_text(value)}" for label, value in rp.cap_rows(r.config) + rp.price_rows(r.config))
    out.append("\n## Totals\n")
    out.append("| | |\n|---|---|")
    out.extend(f"| {name} | {value} |" for name, value in rp.total_rows(r.totals))
    out.append(f"| started (UTC) | {run.get('created_at')} |\n| finished (UTC) | {run.get('finished_at') or '-'} |")
    if r.sources:
        out.append("\n## Sources\n")
        for s in r.sources:
            if s["status"] == "read":
                out.append(f"- `{one_line(s['path'], 500)}` ({md_text(s.get('format'))}, {s.get('chars') or 0:,} chars, "
                           f"sha256 {(s.get('sha256') or s.get('text_sha256') or '')[:12]})")
            else:
                out.append(f"- `{one_line(s['path'], 500)}` skipped: {md_text(s.get('reason'))}"
                           + (f" ({md_text(s['detail'])})" if s.get("detail") else ""))
    out.append("\n## Turns\n")
    for node in r.tree:
        out.extend(_turn(node))
    out.append("\n## Call tree\n")
    for node in r.tree:
        out.extend(_tree(node, 0))
    if r.notices:
        out.append("\n## Notices\n")
        out.extend(f"- [{md_text(n.get('level'))}] {md_text(rp.preview(n.get('message'), 400))}" for n in r.notices)
    return "\n".join(out) + "\n"


def _turn(node: rp.Node) -> list[str]:
    call = node.call
    out = [f"\n### {md_text(rp.label(call)).capitalize()}\n", f"_{md_text(rp.usage(call))}; {md_text(call['status'])}_\n"]
    out.append(fence(call.get("response") or "", "text") if call.get("response") else "_no reply_")
    for cell in node.cells:
        state = "syntax error" if cell.is_syntax_error else (cell.fault or ("error" if cell.error else "ok"))
        out.append(f"\n**Cell {cell.index}** ({state}, {cell.duration_ms} ms)\n")
        out.append(fence(cell.code, "python"))
        out.append("\nOutput:\n")
        out.append(fence(cell.output or "", "text"))
    return out


def _tree(node: rp.Node, level: int) -> list[str]:
    call, pad = node.call, "  " * level
    line = f"{pad}- **{md_text(rp.label(call))}** — {md_text(rp.usage(call))}; {md_text(call['status'])}"
    if node.children:
        line += f"; own ${node.own_cost:.4f}, subtree ${node.subtree_cost:.4f}"
    out = [line]
    if call["kind"] != "root":
        out.append(f"{pad}  - prompt: `{one_line(call.get('prompt'), PROMPT_PREVIEW)}`")
        answer = call.get("response") if call.get("response") is not None else call.get("error")
        out.append(f"{pad}  - {'response' if call.get('response') is not None else 'error'}: "
                   f"`{one_line(answer, RESPONSE_PREVIEW)}`")
    elif call.get("depth"):            # a nested RLM's turn: shown only here
        out.append(f"{pad}  - reply: `{one_line(call.get('response'), RESPONSE_PREVIEW)}`")
        out.extend(f"{pad}  - cell {c.index}: `{one_line(c.code, PROMPT_PREVIEW)}` → "
                   f"`{one_line(c.output, PROMPT_PREVIEW)}`" for c in node.cells)
    for child in node.children:
        out.extend(_tree(child, level + 1))
    return out


def write(store: Any, run_id: str, path: Path, *, include_texts: bool = False) -> None:
    write_text_atomically(path, escape_controls(render(rp.build(store, run_id))))
