"""Fixtures for driving the real window (tests/gui/test_window_*.py).

    from tests.support.gui_app import studio_home, qloop, studio, run_async, wait_until

`studio_home` points RLMSTUDIO_DESKTOP_HOME (and the keyring's file backend) at
tmp_path so no test touches the user's data or keychain. `qloop` is a qasync
loop over pytest-qt's QApplication; `run_async(qloop, coro)` runs a test body
on it, so asyncio tasks and Qt events interleave as in the app. `studio`
builds the window exactly like `run_gui` does (app.gui.build_window).
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Awaitable, Callable

import pytest


@pytest.fixture
def studio_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    from tests.conftest import reload_keyring
    reload_keyring()                 # this file backend, even when an earlier test chose another
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return home


@pytest.fixture
def qloop(qapp):
    import qasync
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    yield loop
    if not loop.is_closed():
        # finish what the test left running on this loop before it goes away
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        from core.llm.openai_http import close_clients
        loop.run_until_complete(close_clients())    # a test that called a model on this loop itself
        flush_qt(qapp)
        loop.close()
    asyncio.set_event_loop(None)


def run_async(loop, coro: Awaitable[Any], timeout: float = 30.0) -> Any:
    return loop.run_until_complete(asyncio.wait_for(coro, timeout))


async def wait_until(condition: Callable[[], Any], timeout: float = 10.0,
                     what: str = "condition") -> Any:
    """Poll `condition` while the loop (and Qt) runs; fail after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.02)


@pytest.fixture
def studio(qapp, qloop, studio_home, qtbot):
    """(window, controller), built like the app builds them, shown."""
    from app.gui import build_window
    window, controller = build_window(qapp)
    window.show()
    yield window, controller
    qloop.run_until_complete(controller.shutdown(timeout=5))
    window.close()
    window.deleteLater()
    flush_qt(qapp)


def flush_qt(qapp) -> None:
    """Deliver what a test left pending (deferred deletes, timers, queued signals) while
    its objects and loop still exist, so nothing of it fires during a later test."""
    import gc
    from PySide6.QtCore import QCoreApplication, QEvent
    for _ in range(3):
        qapp.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
    qapp.processEvents()


def run_with_direct_call(window, controller, qloop, timeout: float = 90):
    """Tick "Also ask directly", press Run, and return what the direct call's task returned
    (the RLM and the plain call side by side: controller.models.compare)."""
    window.question_panel.direct_check.setChecked(True)

    async def body():
        window.question_panel.run_button.click()
        await wait_until(lambda: controller.models.direct_task is not None, what="the direct call")
        return await controller.models.direct_task
    return run_async(qloop, body(), timeout=timeout)
