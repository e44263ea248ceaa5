"""What the scripted OpenAI-compatible server (tests/support/openai_server.py) can be told
to answer: failures of every kind and replies with their finish reason and usage.

    server.fail_next("root", Status(429, retry_after=1), CutStream(120))
    server.script("root", replies=[Reply("done", usage=(50, 5)), Delay(0.5, "late")])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any



@dataclass(frozen=True)
class Status:
    """An HTTP error with an OpenAI-style error body (and Retry-After if given)."""
    code: int
    retry_after: float | None = None
    message: str = ""


@dataclass(frozen=True)
class Hang:
    """Accept the request, send nothing for `seconds`, then close the connection."""
    seconds: float


@dataclass(frozen=True)
class Malformed:
    """200 with a body that is not JSON (in a stream: an event that is not JSON)."""


@dataclass(frozen=True)
class CutStream:
    """Send `after_chars` characters of the reply, then drop the connection
    (no [DONE]; on a non-stream request the body is cut short)."""
    after_chars: int


@dataclass(frozen=True)
class EndStream:
    """Send `after_chars` characters of the reply, then end the response cleanly: no
    finish_reason, no usage, no `data: [DONE]` (a server that stopped mid-reply but
    closed its chunked body properly). On a non-stream request: a Malformed body."""
    after_chars: int


@dataclass(frozen=True)
class Body:
    """200 with `value` (any JSON value) as the body; in a stream, one event whose data
    is `value`, then `data: [DONE]`. E.g. Body({"error": {...}}), Body([]), Body(None)."""
    value: Any


@dataclass(frozen=True)
class Delay:
    """Extra latency, then a normal reply: `reply` if given, else whatever comes
    next (the next failure or the script's reply; from `fn`, an empty reply)."""
    seconds: float
    reply: str | None = None


@dataclass(frozen=True)
class Reply:
    """A reply with control over finish_reason and usage (a plain str is
    Reply(text))."""
    text: str
    finish_reason: str = "stop"
    usage: tuple[int, int] | None = None     # (prompt_tokens, completion_tokens)


Failure = Status | Hang | Malformed | CutStream | EndStream | Body | Delay
Action = str | Reply | Failure
