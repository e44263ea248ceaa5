"""What the root is shown of one executed cell: a header ("[block 2 of 3: error]"), its
stdout, stderr and error, what stopped it, and the whole truncated in the middle to
RunConfig.max_output_chars. Used by the turn loop (core/engine/rlm.py) and a fork's
edited turn (core/engine/edited_turn.py), so both show the same words."""

from __future__ import annotations

from typing import Any

from core.engine.parse import truncate_middle
from core.local_defaults import output_chars

NOTHING_PRINTED = "(it printed nothing)"


def cell_output(config: Any, index: int, count: int, result: Any) -> str:
    """`result` (core.repl.client's exec result) as the root reads it; `config` gives
    cell_timeout_s and max_output_chars."""
    parts: list[str] = []
    if result.stdout:
        parts.append(result.stdout.rstrip("\n"))
    if result.stdout_chars > len(result.stdout):
        parts.append(f"[the cell printed {result.stdout_chars:,} characters in all; the middle was dropped]")
    if result.stderr:
        parts.append("[stderr]\n" + result.stderr.rstrip("\n"))
    if result.error:
        label = "SyntaxError" if result.is_syntax_error else "error"
        parts.append(f"[{label}]\n{result.error.rstrip()}")
    if result.fault == "timeout":
        parts.append(f"[the cell ran past the {config.cell_timeout_s:g} s limit and was stopped]")
    if result.restarted:
        parts.append("[the REPL was restarted: your variables are gone; `context` and `documents` "
                     "are loaded again]")
    body = "\n".join(parts) if parts else NOTHING_PRINTED
    state = ("SyntaxError, nothing ran" if result.is_syntax_error else "stopped" if result.fault
             else "error" if result.error else "ran")
    header = f"[block {index} of {count}: {state}]"
    # a small root is shown less of it (core/local_defaults.py: output_chars)
    return header + "\n" + truncate_middle(body, output_chars(config.root_model, config.max_output_chars))
