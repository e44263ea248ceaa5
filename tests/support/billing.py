"""What the engine should have settled for what the scripted server saw.

The engine's rule (core/llm/client.py, attempt_usage): an attempt answered with an
HTTP error status costs nothing; a complete reply whose usage reached the engine
costs that usage; every other attempt the server accepted (cut, timed out,
cancelled, no usage sent) costs the engine's estimate (core/llm/pricing.py) of
the messages plus of the text received. The server bills by its own count
(characters / 4), so on estimated attempts the two differ by the estimation error;
everything else must agree to the last cent. One thing the server cannot know: how
much of a stream a client that hung up mid-way had read; for those attempts the
engine's figure lies between "nothing of what was sent" and "all of it" (slack_usd).
Nor whether a client read a reply it sent in full in time: a loaded client whose
own timeout fires after the last byte left settles that attempt on its estimate
(late_delta_usd: the most such a swap can change the total, per attempt).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from core.llm.pricing import PriceBook, estimate_text_tokens, estimate_tokens


@dataclass
class Reconciliation:
    requests: int = 0
    exact_usd: float = 0.0          # attempts whose usage reached the engine (server billed == settled)
    estimated_usd: float = 0.0      # the engine's estimate of every other accepted attempt
    estimated_attempts: int = 0
    server_estimated_usd: float = 0.0   # what the server billed for those same attempts
    slack_usd: float = 0.0          # streams the client left mid-way: text sent but maybe not read
    late_delta_usd: float = 0.0     # largest |estimate - usage| of a reply sent in full

    @property
    def expected_usd(self) -> float:
        return self.exact_usd + self.estimated_usd

    @property
    def server_usd(self) -> float:
        return self.exact_usd + self.server_estimated_usd


def reconcile(server: Any, prices: PriceBook, requests: Iterable[Any] | None = None,
              prefix: str = "openai/") -> Reconciliation:
    """Apply the engine's rule to every request the server logged."""
    out = Reconciliation()
    for r in (server.history if requests is None else requests):
        out.requests += 1
        model = prefix + r.model
        if r.status is not None and r.status >= 400:
            continue
        billed = server.request_usd(r)
        tokens_in = estimate_tokens(model, r.messages)
        tokens_out = estimate_text_tokens(model, r.sent_text)
        if r.usage_sent and not r.disconnected:
            out.exact_usd += billed
            alt = prices.cost_usd(model, tokens_in, tokens_out)
            out.late_delta_usd = max(out.late_delta_usd, abs(alt - billed))
            continue
        if r.disconnected and r.stream and r.sent_text:     # the client may not have read all of it
            out.slack_usd += prices.cost_usd(model, 0, tokens_out)
            tokens_out = 0
        out.estimated_usd += prices.cost_usd(model, tokens_in, tokens_out)
        out.estimated_attempts += 1
        out.server_estimated_usd += billed
    return out
