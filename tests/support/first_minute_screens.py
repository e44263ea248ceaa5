"""Screenshots of the first minute for the README and docs/user-guide.md (run under Xvfb):

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python -m tests.support.first_minute_screens

Runs the real window with RLMSTUDIO_DESKTOP_HOME in a temp dir and a scripted
OpenAI-compatible server posing as Ollama (on 127.0.0.1:11434 when that port
is free, else on a port the detector is told about). Saves
docs/screenshots/first-minute.png (the welcome view) and
docs/screenshots/run.png (a finished run over the samples; the model's
replies are scripted, the code really runs over the sample documents).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from http.server import ThreadingHTTPServer
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

TURNS = [
    "First I look at what there is.\n```repl\nfor d in documents:\n    print(d['path'], d['chars'])\n```",
    "The log is the big one: I find the failed payments with code, and ask the sub model which "
    "quarterly reports mention an outage.\n```repl\n"
    "log = next(d['text'] for d in documents if d['path'].endswith('webshop.log'))\n"
    "failed = [l for l in log.splitlines() if 'card payment failed' in l]\n"
    "print(len(failed), 'failed;', failed[0][:19], '->', failed[-1][:19])\n"
    "print([l for l in log.splitlines() if 'renewed' in l])\n"
    "reports = [d for d in documents if '/reports/' in '/' + d['path']]\n"
    "answers = llm_query_batched([f\"Does this report mention a web shop outage? Answer yes or no, "
    "and quote it.\\n\\n{d['text']}\" for d in reports])\n"
    "mentions = [(d['path'], a) for d, a in zip(reports, answers) if a.lower().startswith('yes')]\n"
    "print(mentions)\n```",
    "FINAL(**Card payments failed on 14 August 2024 from 09:42 to 12:52 UTC**: 92 orders "
    "failed with *gateway TLS handshake failed (certificate has expired)*; the certificate was renewed "
    "at 12:54:30 and payments worked again. The Q3 2024 report (reports/2024-Q3.md) mentions it: "
    "\"card payments in the web shop failed from about 09:40 to 12:55 after the payment gateway's "
    "certificate expired\", about 60 orders lost or delayed.)",
]


def sub_reply(request) -> str:
    if "Q3 2024" in request.prompt:
        return ("Yes: \"On 14 August 2024 card payments in the web shop failed from about 09:40 to 12:55 "
                "after the payment gateway's certificate expired\".")
    return "No."


def start_server():
    from tests.support.openai_server import ScriptedOpenAI, _Handler
    server = ScriptedOpenAI()
    try:
        handler = type("Handler", (_Handler,), {"owner": server})
        httpd = ThreadingHTTPServer(("127.0.0.1", 11434), handler)
        httpd.daemon_threads = True
        import threading
        server._httpd = httpd
        server.url = "http://127.0.0.1:11434/v1"
        server._thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        server._thread.start()
    except OSError:
        server.start()
        os.environ["RLMSTUDIO_DESKTOP_DISCOVERY_PORTS"] = server.url.rsplit(":", 1)[1].split("/")[0]
    server.script("qwen2.5-coder:7b", replies=list(TURNS))
    server.script("llama3.2:3b", fn=sub_reply)
    return server


async def wait_for(condition, timeout: float = 60.0) -> None:
    loop = asyncio.get_event_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise TimeoutError("gave up waiting")
        await asyncio.sleep(0.05)


async def shoot(app, window, controller) -> None:
    glue = controller.first_run
    await wait_for(lambda: glue.discovery_task is not None and glue.discovery_task.done())
    await wait_for(lambda: glue.keys_task is not None and glue.keys_task.done())
    await asyncio.sleep(0.5)
    OUT.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(OUT / "first-minute.png"))

    server_row = next(r for r in glue.view.server_rows() if r[0].found)
    server_row[1].setCurrentText("qwen2.5-coder:7b")
    glue.use_server(server_row[0], "qwen2.5-coder:7b")
    port = server_row[0].port
    glue.view.samples_button.click()
    await wait_for(lambda: controller.ingest_task is not None and controller.ingest_task.done()
                   and len(controller.documents) == 10)
    qp = window.question_panel
    qp.set_models(f"{server_row[0].endpoint_name}/qwen2.5-coder:7b",
                  f"{server_row[0].endpoint_name}/llama3.2:3b")
    qp.set_caps({"max_depth": 1, "max_cost_usd": 0, "max_iterations": 10})
    qp.run_button.click()
    await wait_for(lambda: controller.running)
    await wait_for(lambda: not controller.running, timeout=120)
    window.run_panes.flush()
    qp.set_question("Which orders failed first, and did any customer order again the same day?")
    await asyncio.sleep(0.8)
    window.grab().save(str(OUT / "run.png"))
    print("saved", OUT / "first-minute.png", OUT / "run.png", "port", port,
          "answer:", (controller.last_outcome.answer or "")[:60], flush=True)


def start_app():
    """A throw-away data dir and keyring, the stand-in server, a QApplication and its qasync
    loop: what every screenshot script starts from. Returns (app, loop, server)."""
    home = tempfile.mkdtemp(prefix="rlm-shots-")
    os.environ["RLMSTUDIO_DESKTOP_HOME"] = home
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyrings.alt.file.PlaintextKeyring"
    os.environ["XDG_DATA_HOME"] = os.path.join(home, "xdg")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    server = start_server()
    from PySide6.QtWidgets import QApplication
    import qasync
    app = QApplication(["rlm-studio"])
    app.setApplicationName("RLM Studio")
    from app.gui_gc import collect_on_gui_thread
    collect_on_gui_thread(app)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    return app, loop, server


def main() -> int:
    app, loop, server = start_app()
    from app.settings import Settings
    settings = Settings(theme="light")
    from app.gui import build_window
    window, controller = build_window(app, settings)
    window.resize(1440, 900)
    window.show()
    return run_shots(loop, server, window, controller, shoot(app, window, controller))


def run_shots(loop, server, window, controller, shots) -> int:
    """Run the coroutine `shots` on the window's loop, then shut the app down and stop
    the stand-in server, whatever happened."""
    try:
        with loop:
            loop.run_until_complete(shots)
            loop.run_until_complete(controller.shutdown(timeout=5))
    finally:
        server.stop()
        window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
