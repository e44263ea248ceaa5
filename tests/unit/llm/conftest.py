"""Fixtures for the model-call layer: the scripted OpenAI server over real HTTP."""

from tests.support.openai_server import openai_server  # noqa: F401  (fixture)
