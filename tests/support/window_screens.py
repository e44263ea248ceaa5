"""Screenshots of the whole window on a laptop and a desktop screen (docs/window.md):

    for s in 1024x700 1366x768 1920x1080; do
      xvfb-run -a -s "-screen 0 ${s}x24" .venv/bin/python -m tests.support.window_screens $s
    done

The real window on an Xvfb screen of that size, RLMSTUDIO_DESKTOP_HOME in a temp dir, the
scripted server posing as Ollama (tests/support/first_minute_screens.py): the
samples, a finished run with its answer (made-up prices and a $0.10 cap, so the
meter's spend chart has a line), History open, a sub-call selected, the Coverage tab. The screen itself is grabbed (what a user would see), into
docs/screenshots/window-<W>x<H>.png.
"""

from __future__ import annotations

import asyncio
import os
import sys

from tests.support.first_minute_screens import OUT, run_shots, start_app, wait_for


async def shoot(app, window, controller, size: str) -> None:
    glue = controller.first_run
    await wait_for(lambda: glue.started)
    glue.refresh()                                       # look for the (stand-in) local server
    await wait_for(lambda: glue.discovery_task is not None and glue.discovery_task.done())
    server_row = next(r for r in glue.view.server_rows() if r[0].found)
    glue.use_server(server_row[0], "llama3.2:3b")        # small: "Use this" makes it the sub
    glue.view.samples_button.click()
    await wait_for(lambda: controller.ingest_task is not None and controller.ingest_task.done()
                   and len(controller.documents) == 10)
    qp = window.question_panel
    # Priced as a cloud model would be, with a dollar cap: the meter's spend chart has
    # something to draw (the stand-in server costs nothing; the prices are made up).
    from app.settings import ModelSettings
    from core.config import Price
    for model_id, price in ((qp.root_model(), Price(1.0, 4.0)), (qp.sub_model(), Price(0.5, 1.5))):
        controller.settings.models[model_id] = ModelSettings(price=price)
    qp.set_caps({"max_depth": 1, "max_cost_usd": 0.10, "max_iterations": 10})
    qp.run_button.click()
    await wait_for(lambda: controller.running)
    await wait_for(lambda: not controller.running, timeout=120)
    window.show_history(True)
    panes = window.run_panes
    panes.flush()
    sub = next((n for n in panes.view.node_list if n.kind == "llm"), None)
    if sub is not None:
        panes.tree.select_node(sub.id)
    tabs = controller.trust.tabs
    tabs.setCurrentIndex(0)
    qp.set_question("Which orders failed first, and did any customer order again the same day?")
    await asyncio.sleep(1.8)          # the transcript ends on the answer by itself (issue 27)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"window-{size}.png"
    app.primaryScreen().grabWindow(0).save(str(path))
    print("saved", path, "answer:", (controller.last_outcome.answer or "")[:60], flush=True)


def main(argv: list[str]) -> int:
    size = argv[0] if argv else "1366x768"
    width, height = (int(v) for v in size.split("x"))
    app, loop, server = start_app()
    from app.settings import Settings
    settings = Settings(theme="light")
    settings.ui["welcome_seen"] = True
    from app.gui import build_window
    window, controller = build_window(app, settings)
    window.move(0, 0)
    window.resize(width, height)        # no window manager under Xvfb: the whole screen
    window.show()
    return run_shots(loop, server, window, controller, shoot(app, window, controller, size))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
