"""One self-contained HTML page per run: inline CSS and JS, no network (a strict
Content-Security-Policy forbids any load, and only our own script may run);
collapsible turns and call tree, with the cost of every node. Every piece of run
text is HTML-escaped: documents and model output may contain <script>."""

from __future__ import annotations

import base64
import hashlib
import html
from pathlib import Path
from typing import Any

from core.control_chars import escape_controls
from core.limits import summary
from core.run_names import fork_line, run_heading
from core.store import report as rp
from core.support import unsupported_line
from core.exports.answer_render import answer_html
from core.exports.export_citations import check, summary_lines
from core.exports.export_json import write_text_atomically

PROMPT_PREVIEW = 4000
RESPONSE_PREVIEW = 8000

CSS = """
:root{--fg:#1d2433;--muted:#5b6474;--bg:#fff;--panel:#f5f7fa;--line:#dde2ea;--ok:#1a7f37;--bad:#b42318;--acc:#3056d3}
@media (prefers-color-scheme:dark){:root{--fg:#e4e8ef;--muted:#9aa4b5;--bg:#151821;--panel:#1e2230;--line:#323850;--ok:#4ac26b;--bad:#f47067;--acc:#7c9cff}}
*{box-sizing:border-box}body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;max-width:1100px;padding:24px}
h1{font-size:1.4em;margin:0 0 4px}h2{font-size:1.15em;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
.muted{color:var(--muted)}.limited{border-left:4px solid #d9a400;padding:4px 10px;background:var(--panel)}.status{display:inline-block;padding:1px 8px;border-radius:10px;background:var(--panel);font-weight:600}
.status.finished{color:var(--ok)}.status.failed,.status.interrupted,.status.cancelled{color:var(--bad)}
pre{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:8px 10px;overflow:auto;white-space:pre-wrap;word-break:break-word;margin:6px 0;font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table{border-collapse:collapse}td,th{border:1px solid var(--line);padding:3px 10px;text-align:left}
details{border-left:2px solid var(--line);margin:6px 0;padding-left:10px}summary{cursor:pointer}
summary .cost{float:right;color:var(--muted);font-variant-numeric:tabular-nums}
ul.tree{list-style:none;padding-left:14px}ul.tree li{margin:2px 0}
.err{color:var(--bad)}.label{font-weight:600}.toolbar button{margin-right:6px}
blockquote.question{margin:6px 0;padding:6px 12px;border-left:3px solid var(--acc);background:var(--panel)}
.answer{border:2px solid var(--acc);border-radius:6px;padding:4px 16px}.answer table{margin:8px 0}
.answer th{background:var(--panel)}a.cite{color:var(--acc)}.cite.bad{color:var(--bad);text-decoration:line-through}
.passage:target{outline:2px solid var(--acc);border-radius:4px}
"""

JS = """
function setAll(open){document.querySelectorAll('details').forEach(function(d){d.open=open;});}
document.getElementById('expand').addEventListener('click',function(){setAll(true);});
document.getElementById('collapse').addEventListener('click',function(){setAll(false);});
"""


def esc(text: Any) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def pre(text: str | None, cls: str = "") -> str:
    return f'<pre class="{cls}">{esc(text or "")}</pre>'


def _csp() -> str:
    digest = base64.b64encode(hashlib.sha256(JS.encode("utf-8")).digest()).decode("ascii")
    return f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'; img-src data:"


def render(r: rp.Report) -> str:
    run = r.run
    out = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
           f'<meta http-equiv="Content-Security-Policy" content="{_csp()}">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{esc(run_heading(run))} · RLM Studio</title>",     # whole: a tab cuts it itself
           f"<style>{CSS}</style></head><body>"]
    out.append(f"<h1>{esc(run_heading(run))}</h1>")    # the whole question and its time (core/run_names.py)
    out.append(f'<p class="muted">RLM Studio run <code>{esc(run["id"])}</code></p>')
    if fork_line(r.forked_from):
        out.append(f'<p class="fork"><strong>{esc(fork_line(r.forked_from))}</strong> '
                   f'(run <code>{esc(r.forked_from.get("run_id"))}</code>)</p>')
    out.append(f'<p><span class="status {esc(run["status"])}">{esc(run["status"])}</span> '
               f'<span class="muted">started {esc(run.get("created_at"))} UTC'
               + (f', finished {esc(run.get("finished_at"))} UTC' if run.get("finished_at") else "") + "</span></p>")
    if run.get("error"):
        out.append(f'<p class="err">{esc(run["error"])}</p>')
    limited = summary(r.totals.get("limited"))
    if limited:
        out.append(f'<p class="limited"><strong>Limited:</strong> {esc(limited)}</p>')
    out.append('<h2>Question</h2><blockquote class="question">' + esc(run["question"]).replace("\n", "<br>")
               + "</blockquote>")
    passages: list = []
    if run.get("answer") is not None:
        body, passages = answer_html(run["answer"], r.documents)
        out.append(f'<h2>Answer</h2><div class="answer">{body}</div>')
        if unsupported_line(r.totals):
            out.append(f'<p class="err">Unsupported: {esc(unsupported_line(r.totals))}</p>')
        flags = summary_lines(check(run["answer"], r.documents if r.texts_stored else None))
        if flags:
            out.append('<ul class="unresolved">' + "".join(f'<li class="err">{esc(f)}</li>' for f in flags)
                       + "</ul>")
    else:
        out.append('<h2>Answer</h2><p class="muted">no answer</p>')
    if passages:
        out.append("<h2>Cited passages</h2>")
        for p in passages:
            c = p.citation
            out.append(f'<div class="passage" id="{esc(p.anchor)}"><p><code>{esc(c.path)}</code> '
                       f'<span class="muted">{esc(c.address)}</span></p>{pre(p.text, "quote")}</div>')
    out.append("<h2>Models and caps</h2><table>")
    out.append(f"<tr><th>root model</th><td>{esc(r.model_line('root'))}</td></tr>"
               f"<tr><th>sub model</th><td>{esc(r.model_line('sub'))}</td></tr>")
    out.extend(f"<tr><th>{esc(label)}</th><td>{esc(value)}</td></tr>" for label, value in rp.cap_rows(r.config) + rp.price_rows(r.config))
    out.append("</table><h2>Totals</h2><table>")
    out.extend(f"<tr><th>{esc(name)}</th><td>{esc(value)}</td></tr>" for name, value in rp.total_rows(r.totals))
    out.append("</table>")
    if r.sources:
        out.append("<h2>Sources</h2><ul>")
        for s in r.sources:
            if s["status"] == "read":
                out.append(f"<li><code>{esc(s['path'])}</code> <span class=\"muted\">{esc(s.get('format'))}, "
                           f"{s.get('chars') or 0:,} chars</span></li>")
            else:
                out.append(f"<li><code>{esc(s['path'])}</code> <span class=\"err\">skipped: {esc(s.get('reason'))}"
                           f"{(' (' + esc(s['detail']) + ')') if s.get('detail') else ''}</span></li>")
        out.append("</ul>")
    out.append('<h2>Turns</h2><p class="toolbar"><button id="expand">Expand all</button>'
               '<button id="collapse">Collapse all</button></p>')
    for node in r.tree:
        out.append(_turn(node))
    out.append('<h2>Call tree</h2><ul class="tree">')
    out.extend(_tree(node) for node in r.tree)
    out.append("</ul>")
    if r.notices:
        out.append("<h2>Notices</h2><ul>")
        out.extend(f"<li>[{esc(n.get('level'))}] {esc(n.get('message'))}</li>" for n in r.notices)
        out.append("</ul>")
    out.append(f"<script>{JS}</script></body></html>")
    return "\n".join(out) + "\n"


def _summary(call: dict[str, Any], extra: str = "") -> str:
    cost = call.get("cost_usd") or call.get("subtree_cost_usd") or 0   # no call of its own: its subtree
    return (f'<summary><span class="label">{esc(rp.label(call))}</span> '
            f'<span class="muted">{esc(call.get("model"))} · {call.get("input_tokens") or 0:,} in / '
            f'{call.get("output_tokens") or 0:,} out · {(call.get("duration_ms") or 0) / 1000:.1f} s · '
            f'{esc(call.get("status"))}</span>{extra}<span class="cost">${cost:.4f}</span></summary>')


def _cells(node: rp.Node) -> str:
    out = []
    for cell in node.cells:
        state = "syntax error" if cell.is_syntax_error else (cell.fault or ("error" if cell.error else "ok"))
        out.append(f"<details><summary>cell {cell.index} <span class=\"muted\">{esc(state)} · "
                   f"{cell.duration_ms} ms</span></summary>{pre(cell.code, 'code')}{pre(cell.output, 'out')}</details>")
    return "".join(out)


def _turn(node: rp.Node) -> str:
    return f'<details class="turn" open>{_summary(node.call)}{pre(node.call.get("response"))}{_cells(node)}</details>'


def _tree(node: rp.Node) -> str:
    call = node.call
    extra = (f' <span class="muted">own ${node.own_cost:.4f} · subtree ${node.subtree_cost:.4f}</span>'
             if node.children else "")
    body = []
    if call["kind"] != "root":
        body.append('<div class="muted">prompt</div>' + pre(rp.preview(call.get("prompt"), PROMPT_PREVIEW)))
        if call.get("response") is not None:
            body.append('<div class="muted">response</div>' + pre(rp.preview(call.get("response"), RESPONSE_PREVIEW)))
        if call.get("error"):
            body.append(f'<div class="err">{esc(call["error"])}</div>')
    elif call.get("depth"):            # a nested RLM's turn: shown only here
        body.append(pre(rp.preview(call.get("response"), RESPONSE_PREVIEW)) + _cells(node))
    if node.children:
        body.append('<ul class="tree">' + "".join(_tree(c) for c in node.children) + "</ul>")
    return f"<li><details>{_summary(call, extra)}{''.join(body)}</details></li>"


def write(store: Any, run_id: str, path: Path, *, include_texts: bool = False) -> None:
    write_text_atomically(path, escape_controls(render(rp.build(store, run_id))))
