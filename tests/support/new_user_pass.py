"""A new user's pass over the real window on a real X server, without a window manager:

    for s in 1024x700 1366x768 1920x1080; do
      QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 ${s}x24" \
        .venv/bin/python -m tests.support.new_user_pass $s /tmp/pass
    done

A fresh data folder (RLMSTUDIO_DESKTOP_HOME in a temp dir) and the scripted server posing
as Ollama (tests/support/first_minute_screens.py). The window opens at the size it picks
for itself (nothing resizes it), and the whole screen is grabbed, as a user sees it, at:

  1-first-start   the Welcome page, as the app opens on a fresh computer
  2-run           Use this, the samples, Run: a finished run, History open
  3-settings      Settings (the Endpoints page Use this filled)
  4-compare       a second run, then History's Compare of the two
  5-export        History's Export (the file dialog, as Ctrl+E opens it)
  6-sources       a folder added beside the samples: long names alike but for their quarter,
                  a corrupt file and a binary one (the Sources list: names, Why skipped)

The PNGs go to the folder given (docs/screenshots/ for the ones the user pages show), and
each step prints the window's and the dialog's geometry against the screen's.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.support.first_minute_screens import TURNS, run_shots, start_app, wait_for


def geometry(widget) -> str:
    g = widget.frameGeometry()
    return f"{g.width()}x{g.height()}+{g.x()}+{g.y()}"


async def shoot(app, window, controller, server, size: str, out: Path) -> None:
    def grab(name: str, *widgets) -> None:
        app.processEvents()
        path = out / f"pass-{size}-{name}.png"
        screen = app.primaryScreen()              # asked each time: Qt may replace it
        avail = screen.availableGeometry()
        screen.grabWindow(0).save(str(path))
        fits = all(avail.contains(w.frameGeometry()) for w in (window, *widgets))
        print(f"{name}: screen {avail.width()}x{avail.height()} · window {geometry(window)}"
              + "".join(f" · {type(w).__name__} {geometry(w)}" for w in widgets)
              + ("" if fits else "  WIDER OR TALLER THAN THE SCREEN"), flush=True)

    glue = controller.first_run
    await wait_for(lambda: glue.started)
    await wait_for(lambda: glue.discovery_task is not None and glue.discovery_task.done())
    await asyncio.sleep(0.8)
    grab("1-first-start")

    server_row = next(r for r in glue.view.server_rows() if r[0].found)
    server_row[1].setCurrentText("qwen2.5-coder:7b")
    glue.use_server(server_row[0], "qwen2.5-coder:7b")
    glue.view.samples_button.click()
    await wait_for(lambda: controller.ingest_task is not None and controller.ingest_task.done()
                   and len(controller.documents) == 10)
    qp = window.question_panel
    name = server_row[0].endpoint_name
    qp.set_models(f"{name}/qwen2.5-coder:7b", f"{name}/llama3.2:3b")
    qp.set_caps({"max_depth": 1, "max_cost_usd": 0, "max_iterations": 10})
    qp.run_button.click()
    await wait_for(lambda: controller.running)
    await wait_for(lambda: not controller.running, timeout=120)
    first = controller.last_outcome.run_id
    window.show_history(True)
    window.run_panes.flush()
    await asyncio.sleep(1.8)                    # the transcript ends on the answer by itself
    grab("2-run")

    dialog = controller.open_settings("endpoints")
    await asyncio.sleep(0.5)
    grab("3-settings", dialog)
    dialog.reject()

    server.script("qwen2.5-coder:7b", replies=list(TURNS))
    qp.set_question("Find the outage in the web shop log: when did card payments fail, and which "
                    "report mentions it?")
    qp.run_button.click()
    await wait_for(lambda: controller.running)
    await wait_for(lambda: not controller.running, timeout=120)
    second = controller.last_outcome.run_id
    view = controller.trust.actions.compare(first, second)
    await asyncio.sleep(0.8)
    grab("4-compare", view)
    view.close()

    history = window.history_pane
    history.select(second)

    def shoot_export() -> None:
        from PySide6.QtWidgets import QFileDialog
        dialogs = [w for w in app.topLevelWidgets() if isinstance(w, QFileDialog) and w.isVisible()]
        grab("5-export", *dialogs)
        for d in dialogs:
            d.reject()
    from PySide6.QtCore import QTimer
    QTimer.singleShot(1500, shoot_export)
    controller.history.export_current()         # modal, as Ctrl+E: the timer shoots and closes it

    import tempfile
    folder = Path(tempfile.mkdtemp(prefix="rlm-pass-")) / "quarterly-reports"
    folder.mkdir()
    for q in range(1, 5):
        (folder / f"2024-Q{q}-report-with-a-long-name.md").write_text(f"# Q{q}\nRevenue {q}.\n")
    (folder / "board-memo.docx").write_bytes(b"PK\x03\x04 not really a docx")
    (folder / "junk.bin").write_bytes(b"\x00\x01\x02binary\x00" * 300)
    controller.add_paths([str(folder)])
    await wait_for(lambda: controller.ingest_task is not None and controller.ingest_task.done())
    await asyncio.sleep(0.5)
    window.sources_pane.table.scrollToBottom()  # the skipped files are listed last
    grab("6-sources")


def main(argv: list[str]) -> int:
    size = argv[0] if argv else "1366x768"
    out = Path(argv[1] if len(argv) > 1 else "/tmp/rlm-pass")
    out.mkdir(parents=True, exist_ok=True)
    app, loop, server = start_app()
    from app.settings import Settings
    from app.gui import build_window
    window, controller = build_window(app, Settings(theme="light"))
    window.show()                               # the size the app picks: nothing resizes it here
    return run_shots(loop, server, window, controller, shoot(app, window, controller, server, size, out))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
