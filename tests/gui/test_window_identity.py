"""The window says once that the data and keys moved to this app's own names (issue 27):
a real data directory under XDG_DATA_HOME and the file keyring studio_home selects."""

from __future__ import annotations

import sqlite3

from tests.support.gui_app import qloop, run_async, studio_home, wait_until  # noqa: F401


def test_the_window_says_the_data_and_keys_moved(qapp, qloop, studio_home, tmp_path, monkeypatch):
    import keyring
    from core import identity_migration
    from core.identity import APP_ID, OLD_APP_NAME
    from core.secrets import INDEX_ENTRY, OLD_SERVICE, SERVICE
    for name in ("RLMSTUDIO_DESKTOP_HOME", "RLM_STUDIO_HOME"):
        monkeypatch.delenv(name, raising=False)        # the platform's own directories (XDG_DATA_HOME)
    old = tmp_path / "xdg-data" / OLD_APP_NAME
    old.mkdir(parents=True)
    (old / "settings.json").write_text('{"version": 1, "root_model": "lab/coder-7b"}')
    sqlite3.connect(old / "runs.db").close()
    ring = keyring.get_keyring()                       # the file backend of studio_home
    ring.set_password(OLD_SERVICE, "openai", "sk-ours-openai-0123456789")
    ring.set_password(OLD_SERVICE, INDEX_ENTRY, "openai")
    identity_migration.take_notes()
    monkeypatch.setattr(identity_migration, "_TRIED", False)

    from app.gui import build_window
    window, controller = build_window(qapp)
    window.show()
    try:
        assert controller.settings.root_model == "lab/coder-7b"          # read from the copy
        messages = [n.message for n in window.notifier.history]
        assert sum(m.startswith("RLM Studio now keeps its data in") and APP_ID in m for m in messages) == 1
        run_async(qloop, wait_until(lambda: any("Your API keys (openai) moved" in n.message
                                                for n in window.notifier.history), what="keys notice"))
        assert ring.get_password(SERVICE, "openai") == "sk-ours-openai-0123456789"
        assert ring.get_password(OLD_SERVICE, "openai") is None
        run_async(qloop, wait_until(lambda: "openai" in controller.first_run.view.keys_label.text(),
                                    what="the key listed on the welcome page"))
    finally:
        window.close()
        run_async(qloop, controller.shutdown())
    again, controller2 = build_window(qapp)                 # the next start says nothing
    try:
        assert not any("now keeps its data" in n.message for n in again.notifier.history)
    finally:
        again.close()
        run_async(qloop, controller2.shutdown())
