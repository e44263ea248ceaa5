"""The desktop entry: `run_gui(argv)` opens the window.

Order matters for start-up time: QApplication first, the window shown as soon
as it exists, then everything else after the first paint. litellm and the
engine are imported only when a run starts or the model list is wanted.

argv is what follows the program name (`gui`, `--gui` are accepted and ignored):
  --smoke-quit-after MS   quit on its own after MS milliseconds (CI); prints
                          the time from process start to the first paint
  --print-startup         print the time to first paint
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import logging.handlers
import sys
import time
import traceback
import os
from core.paths import data_dir
import threading
from core.paths import resources_dir

_IMPORTED_AT = time.time()
log = logging.getLogger("app.gui")


def process_start_time() -> float:
    """Epoch seconds when this process started (Linux: its start time in clock ticks
    since boot, against CLOCK_BOOTTIME, good to 10 ms; elsewhere: when this module was
    imported, which is a little later). /proc/stat's btime is whole seconds: not used."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        started_after_boot = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        running_for = time.clock_gettime(time.CLOCK_BOOTTIME) - started_after_boot
        return time.time() - running_for
    except (OSError, ValueError, IndexError, AttributeError):
        return _IMPORTED_AT


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(prog="rlm-studio", add_help=False)
    parser.add_argument("--smoke-quit-after", type=int, metavar="MS", default=None)
    parser.add_argument("--print-startup", action="store_true")
    parser.add_argument("--gui", action="store_true")
    args, rest = parser.parse_known_args([a for a in argv if a != "gui"])
    return args, rest


def setup_logging() -> str:
    """Log to <data dir>/logs/rlm-studio.log (rotated); returns the path."""
    folder = data_dir() / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rlm-studio.log"
    root = logging.getLogger()
    if not any(getattr(h, "rlm_studio_log", False) for h in root.handlers):
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=2_000_000, backupCount=3,
                                                       encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler.rlm_studio_log = True  # type: ignore[attr-defined]
        root.addHandler(handler)
        if root.level == logging.NOTSET or root.level > logging.INFO:
            root.setLevel(logging.INFO)
    return str(path)


def install_excepthook(notifier, log_path: str) -> None:
    """Every uncaught exception (in Qt slots too) is logged and shown in the
    window's banner; the app keeps running."""
    # lazy: free in the window (where it runs)
    from ui.notifier import Notification

    def hook(exc_type, exc, tb) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
            return
        text = "".join(traceback.format_exception(exc_type, exc, tb))
        log.error("uncaught exception\n%s", text)
        try:
            notifier.post(Notification(
                "error", f"Something went wrong: {exc_type.__name__}: {exc}"[:300],
                f"The app keeps running. Details were written to {log_path}.",
                detail=text))
        except RuntimeError:   # the window is already gone
            sys.__excepthook__(exc_type, exc, tb)

    sys.excepthook = hook

    def thread_hook(args) -> None:
        """An exception in a worker thread: shown from the GUI thread."""
        if args.exc_type is SystemExit:
            return
        # lazy: free in the window (where it runs)
        from PySide6.QtCore import QTimer
        QTimer.singleShot(0, notifier, lambda: hook(args.exc_type, args.exc_value, args.exc_traceback))

    threading.excepthook = thread_hook


def loop_exception_handler(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    exc = context.get("exception")
    if exc is not None:
        sys.excepthook(type(exc), exc, exc.__traceback__)
    else:
        log.error("event loop: %s", context.get("message"))


def build_window(app, settings=None):
    """The window with its controller, theme and notifier, wired and restored
    (not shown). Tests build the window through this too."""
    # lazy: free in the window (where it runs)
    from app.controller import Controller, load_settings_safely
    # lazy: free in the window (where it runs)
    from ui.main_window import MainWindow
    # lazy: free in the window (where it runs)
    from ui.notifier import Notifier
    # lazy: free in the window (where it runs)
    from ui.theme import ThemeManager

    # lazy: free in the window (where it runs)
    from core import identity_migration
    identity_migration.migrate_data()        # once (done already when run_gui started us)
    error = ""
    if settings is None:
        settings, error = load_settings_safely()
    theme = ThemeManager(app)
    theme.apply(getattr(settings, "theme", "system") or "system")
    notifier = Notifier()
    window = MainWindow(notifier)
    controller = Controller(window, notifier, theme, settings=settings)
    controller.restore_window()
    # lazy: free in the window (where it runs)
    from PySide6.QtCore import QTimer
    window.first_painted.connect(lambda: QTimer.singleShot(0, controller.start))
    if error:
        notifier.warning("Your settings could not be read; defaults are used.", error)
    for note in identity_migration.take_notes():   # data (and keys) moved to this app's own names
        notifier.info(note)
    return window, controller


def run_gui(argv: list[str]) -> int:
    # The window runs the engine: non-dumpable, and no keys in the environment of the
    # helper processes it starts (ingest pool, REPL workers). Idempotent.
    # lazy: free in the window (where it runs)
    from core.engine_process import prepare_engine_process
    prepare_engine_process()
    args, qt_args = parse_args(list(argv))
    # lazy: free in the window (where it runs)
    from PySide6.QtWidgets import QApplication
    app = QApplication.instance() or QApplication(["rlm-studio", *qt_args])
    # lazy: free in the window (where it runs)
    from app.gui_gc import collect_on_gui_thread
    collect_on_gui_thread(app)       # no thread but this one may free the window's Qt objects
    app.setApplicationName("RLM Studio")
    app.setOrganizationName("rlm-studio")
    app.setDesktopFileName("rlm-studio")      # Wayland and docks match the window to rlm-studio.desktop
    # lazy: free in the window (where it runs)
    from PySide6.QtGui import QIcon
    app.setWindowIcon(QIcon(str(resources_dir() / "icons" / "rlm-studio.svg")))
    app.setApplicationDisplayName("RLM Studio")

    # lazy: +3 modules in the window (where it runs)
    import qasync
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)

    # lazy: free in the window (where it runs)
    from core.identity_migration import migrate_data
    migrate_data()              # before the log or the store opens the data directory
    log_path = setup_logging()
    window, controller = build_window(app)
    install_excepthook(window.notifier, log_path)
    loop.set_exception_handler(loop_exception_handler)
    started = process_start_time()

    def on_first_paint() -> None:
        ms = (time.time() - started) * 1000
        log.info("first paint %.0f ms after process start", ms)
        if args.print_startup or args.smoke_quit_after is not None:
            print(f"first paint after {ms:.0f} ms", flush=True)

    window.first_painted.connect(on_first_paint)
    window.show()

    if args.smoke_quit_after is not None:
        # lazy: free in the window (where it runs)
        from PySide6.QtCore import QTimer
        QTimer.singleShot(max(0, args.smoke_quit_after), window.close)

    app.setQuitOnLastWindowClosed(True)
    with loop:
        loop.run_forever()
        # The window is closed: let a run that is still going write its end.
        loop.run_until_complete(controller.shutdown())
    return 0


if __name__ == "__main__":
    sys.exit(run_gui(sys.argv[1:]))
