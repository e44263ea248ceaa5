"""Test-wide isolation: every test gets its own data directory and never touches
the real keychain, settings or run history of the machine."""

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_HOME", str(tmp_path / "rlm-home"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    reload_keyring()
    yield
    # Key variables a test set and a run moved into memory (core.engine_process, run by the
    # run service) are that test's only.
    from core import key_env
    key_env._MEMORY.clear()


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """pytest-qt's QApplication collects cyclic garbage on its own thread only, as the window
    does (app/gui_gc.py): a later test's threads (ingest, the engine's loop) would otherwise
    free earlier tests' widgets off the GUI thread, a SIGSEGV in pytest-qt's processEvents."""
    result = yield
    if fixturedef.argname == "qapp":
        from app.gui_gc import collect_on_gui_thread
        collect_on_gui_thread(result)
    return result


# Files that take minutes (a real Ray cluster started and stopped several times; hundreds of MB
# read in bounded memory; Ctrl+C swept over a CLI's start): scripts/test.sh hands the engine's
# tests to two xdist workers a file at a time in this order, so they start first, spread over the
# workers, rather than one after the other at the end.
FIRST = ("tests/integration/test_grid_ray.py", "tests/integration/test_big_files.py",
         "tests/integration/test_sigint_from_start.py", "tests/integration/test_big_files_trust.py")


def pytest_collection_modifyitems(session, config, items):
    rank = {path: i for i, path in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(FIRST)))   # stable: the rest keep their order


def reload_keyring() -> None:
    """keyring keeps the backend it chose first for the whole process: choose again from
    PYTHON_KEYRING_BACKEND as it is now, so no test inherits another test's backend."""
    import keyring.core
    keyring.core.init_backend()


from tests.support.openai_server import openai_server  # noqa: E402,F401  (a started ScriptedOpenAI)


@pytest.fixture
def server(openai_server):
    """The scripted OpenAI-compatible server on 127.0.0.1 (short name used across the tests)."""
    return openai_server
