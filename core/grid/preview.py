"""What a grid will cost, before it starts: "about $X for N documents x M questions;
this cap pays for about K cells".

Each cell is estimated as the engine's Auto would run it for a document that fits: one
plain call, its prompt counted with the one token estimate (core/token_count.py, no
tokenizer), a reply of REPLY_TOKENS at the output price (the worst case, the root's
max_tokens, is said too). Cells whose document is too large for one plain call run as an
RLM and cost more; the preview counts them apart, so nobody reads it as their price.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from core.grid.model import Column, cell_question

REPLY_TOKENS = 200


@dataclass(frozen=True)
class Preview:
    documents: int
    questions: int
    cells: int                    # cells still to run
    about_usd: float | None       # None: a model without a known price
    worst_usd: float | None
    rlm_cells: int                # cells whose document is too large for one plain call
    cap_usd: float | None
    cap_cells: int | None         # cells the cap pays for, at the mean estimate

    def sentence(self) -> str:
        if self.about_usd is None:
            return (f"{self.cells} cells ({self.documents} documents x {self.questions} questions); "
                    "the cost is unknown: a model has no price")
        text = (f"about ${self.about_usd:.4f} for {self.documents} documents x {self.questions} questions "
                f"({self.cells} cells to run; at most ${self.worst_usd:.4f} if every reply used its max tokens)")
        if self.rlm_cells:
            text += f"; {self.rlm_cells} cells have documents too large for one plain call and cost more"
        if self.cap_usd is not None and self.cap_cells is not None:
            text += f"; this cap (${self.cap_usd:.4f}) pays for about {min(self.cap_cells, self.cells)} cells"
        return text


def preview(config: Any, columns: Sequence[Column], documents: Sequence[Any | None],
            cells: Sequence[tuple[int, int]], *, cap_usd: float | None, spent_usd: float = 0.0) -> Preview:
    from core.engine.admission import context_window
    from core.engine.mode import AUTO_SHARE, plain_call_tokens
    from core.llm.pricing import PriceBook
    prices = PriceBook(config.prices)
    model = config.root_model
    price = prices.price(model)
    window = context_window(config, prices, model)
    about = worst = 0.0
    rlm = 0
    tokens_of: dict[tuple[int, int], int] = {}
    for row, col in cells:
        doc = documents[row]
        if doc is None:
            continue
        tokens = tokens_of.setdefault((row, col), plain_call_tokens(cell_question(columns[col], doc.path), [doc]))
        if config.mode != "direct" and (config.mode == "rlm" or window is None or tokens > window * AUTO_SHARE):
            rlm += 1
        if price is not None:
            about += (tokens * price.input_per_m + min(REPLY_TOKENS, config.root_max_tokens) * price.output_per_m) / 1e6
            worst += (tokens * price.input_per_m + config.root_max_tokens * price.output_per_m) / 1e6
    n = len(cells)
    cap_cells = None
    if cap_usd is not None and price is not None and n:
        mean = about / n
        cap_cells = n if mean <= 0 else int(max(cap_usd - spent_usd, 0.0) / mean)
    return Preview(sum(1 for d in documents if d is not None), len(columns), n,
                   about if price is not None else None, worst if price is not None else None, rlm, cap_usd,
                   cap_cells)
