"""Fixtures for the model-call layer: the scripted OpenAI server over real HTTP."""

from tests.support.openai_server import openai_server  # noqa: F401  (fixture)


def pytest_configure(config):
    config.addinivalue_line("markers", "litellm_breaks(reason): a transport contract case litellm's "
                                       "route fails (test_transport_contract.py)")
