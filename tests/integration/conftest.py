import pytest


@pytest.fixture
def server():
    from tests.support.openai_server import ScriptedOpenAI
    s = ScriptedOpenAI().start()
    try:
        yield s
    finally:
        s.stop()
