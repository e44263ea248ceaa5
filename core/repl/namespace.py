"""The names model code gets in the REPL, and the persistent namespace.

`Namespace` owns the globals dict that every cell runs in. The REPL names
(protocol.REPL_NAMES plus the exception classes) are put back after each cell
if the code overwrote or deleted them. Sub-calls go through `sub_call`, a
blocking callable supplied by the worker: (kind, prompts, model, context) ->
list of result slots ({"ok": str} or {"error": {"type", "message"}}).
"""

from __future__ import annotations

import bisect
import builtins
import sys
import threading
import types
TYPE_CHECKING = False
if TYPE_CHECKING:   # (typing costs the worker's start ~8 ms of CPU)
    from typing import Any, Callable

from core.repl import near_miss
from core.repl.protocol import REPL_NAMES

if TYPE_CHECKING:
    SubCall = Callable[[str, list[str], "str | None", "str | None"], list[dict]]


class BudgetExceeded(Exception):
    """The run's budget (cost or sub-call cap) refused this sub-call."""


class SubCallError(Exception):
    """A sub-call failed (provider error, prompt too large, ...)."""


class VarListing(dict):
    """What SHOW_VARS() returns: {name: type name}. Not echoed as a cell's value."""


EXCEPTION_NAMES = ("BudgetExceeded", "SubCallError")
HELPER_NAMES = ("where", "tables")   # REPL names beyond protocol.REPL_NAMES (restored the same way)
RESERVED = frozenset(REPL_NAMES) | frozenset(EXCEPTION_NAMES) | frozenset(HELPER_NAMES) | {"__builtins__"}
# Near misses taken for what they obviously mean, and told (on the cell's stderr, which the
# root sees): a small model called `final(...)` in five blocks and got five NameErrors. Unlike
# the REPL names they are not restored: a cell that defines its own `final` keeps it.
# `Final` too: the real 1.5B model wrote Final("...") (issue 25, the sample set's baseline).
ALIASES = {"final": "FINAL", "final_var": "FINAL_VAR", "Final": "FINAL", "Final_var": "FINAL_VAR",
           "Final_Var": "FINAL_VAR"}


def _chars(doc: dict[str, Any]) -> int:
    """A document's characters: its "chars", else (a plain dict without it) its text's length."""
    chars = doc.get("chars")
    return int(chars) if chars is not None else len(doc.get("text", ""))


def _prompt(value: Any, func: str) -> str:
    if value is None:
        raise TypeError(f"{func}: a prompt must be a string, got None")
    return value if isinstance(value, str) else str(value)


def _prompt_list(values: Any, func: str) -> list[str]:
    if isinstance(values, (str, bytes)) or values is None:
        raise TypeError(f"{func}: pass a list of prompts, got {type(values).__name__}")
    try:
        items = list(values)
    except TypeError:
        raise TypeError(f"{func}: pass a list of prompts, got {type(values).__name__}") from None
    return [_prompt(v, func) for v in items]


def _slot_text(slot: Any) -> str:
    if isinstance(slot, dict) and isinstance(slot.get("ok"), str):
        return slot["ok"]
    err = slot.get("error") if isinstance(slot, dict) else None
    if isinstance(err, dict):
        return f"[error: {err.get('type', 'Error')}: {err.get('message', '')}]"
    return f"[error: ProtocolError: malformed result slot {str(slot)[:200]}]"


def _slot_value(slot: Any, func: str) -> str:
    if isinstance(slot, dict) and isinstance(slot.get("ok"), str):
        return slot["ok"]
    err = slot.get("error") if isinstance(slot, dict) else None
    if not isinstance(err, dict):
        raise SubCallError(f"{func}: malformed result {str(slot)[:200]}")
    kind, msg = str(err.get("type", "Error")), str(err.get("message", ""))
    if kind == "BudgetExceeded":
        raise BudgetExceeded(msg)
    raise SubCallError(f"{kind}: {msg}")


class Namespace:
    def __init__(self, sub_call: SubCall) -> None:
        self._sub_call = sub_call
        self._lock = threading.Lock()
        self.final: dict[str, str] | None = None
        self._addresses: list[tuple[int, int, str, str, list]] = []   # (offset, chars, path, format, spans)
        self._ends: list[int] = []
        self.globals: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
        self._names: dict[str, Any] = {
            "context": "",
            "documents": [],
            "tables": [],
            "llm_query": self.llm_query,
            "llm_query_batched": self.llm_query_batched,
            "rlm_query": self.rlm_query,
            "rlm_query_batched": self.rlm_query_batched,
            "FINAL": self.FINAL,
            "FINAL_VAR": self.FINAL_VAR,
            "SHOW_VARS": self.SHOW_VARS,
            "where": self.where,
            "BudgetExceeded": BudgetExceeded,
            "SubCallError": SubCallError,
        }
        self.globals.update(self._names)
        self._aliases = {alias: self._alias(alias, real) for alias, real in ALIASES.items()}
        self._aliases.update(near_miss.names(lambda: self._names["documents"]))   # open('doc name')
        self.globals.update(self._aliases)

    # ---------------------------------------------------------------- state

    def set_context(self, context: str, documents: list[dict[str, Any]]) -> None:
        # Spans and formats (from the context index) serve where(); model code sees the documents
        # as {"path", "text", "chars", "offset"}.
        # (offset is None when `context` is a list, one str per document: context_file.context_form)
        # "chars" is read, never len(d["text"]): a DocumentDict's "text" is a cut of `context`,
        # a copy of the whole corpus for a one-file corpus (the worker's load peaked at 2x).
        self._addresses = [(int(d.get("offset") or 0), _chars(d),
                            str(d.get("path")), str(d.pop("format", None) or "text"), d.pop("spans", None) or [])
                           for d in documents]
        self._ends = [offset + chars + 2 for offset, chars, *_ in self._addresses]
        # CSV/TSV/XLSX as data: [{"path", "sheet", "header", "rows"}], from the tables file.
        tables = [t for d in documents for t in (d.pop("tables", None) or [])]
        self._names.update(context=context, documents=documents, tables=tables)
        self.globals.update(context=context, documents=documents, tables=tables)

    def restore(self) -> list[str]:
        """Put back REPL names the cell overwrote or deleted. Returns them."""
        restored = []
        for name, value in self._names.items():
            if self.globals.get(name, _MISSING) is not value:
                self.globals[name] = value
                restored.append(name)
        if self.globals.get("__builtins__") is not builtins:
            self.globals["__builtins__"] = builtins
        return restored

    def user_vars(self) -> dict[str, Any]:
        return {k: v for k, v in self.globals.items()
                if k not in RESERVED and not k.startswith("_")
                and not isinstance(v, types.ModuleType) and self._aliases.get(k) is not v}

    def _alias(self, alias: str, real: str) -> Callable[..., None]:
        target = getattr(self, real)

        def taken_as(*args: Any, **kwargs: Any) -> None:
            print(f"[note: there is no `{alias}` in the REPL; `{alias}(...)` was taken as `{real}(...)`. "
                  f"Write {real} next time.]", file=sys.stderr)
            return target(*args, **kwargs)

        taken_as.__name__ = taken_as.__qualname__ = alias
        taken_as.__doc__ = f"Not a REPL name: taken as {real} (and told)."
        return taken_as

    def _describe_vars(self) -> str:
        names = sorted(self.user_vars())
        return ", ".join(names) if names else "(none)"

    def lookup(self, name: str) -> tuple[bool, str | None, str | None]:
        """For get_var: (found, str(value), error)."""
        name = name.strip().strip("'\"").strip()
        if not name or name in ("__builtins__",) or name not in self.globals:
            return False, None, f"no variable named {name!r}; variables: {self._describe_vars()}"
        try:
            return True, str(self.globals[name]), None
        except Exception as exc:  # user __str__ may raise anything
            return False, None, f"str({name}) raised {type(exc).__name__}: {exc}"

    # ---------------------------------------------------------------- REPL functions

    def llm_query(self, prompt: Any, model: str | None = None) -> str:
        """One sub-model call. Raises BudgetExceeded or SubCallError."""
        text = _prompt(prompt, "llm_query")
        results = self._sub_call("llm", [text], None if model is None else str(model), None)
        return _slot_value(results[0] if results else None, "llm_query")

    def llm_query_batched(self, prompts: Any, model: str | None = None) -> list[str]:
        """Many sub-model calls, run concurrently by the engine, in order.
        A failed prompt gives "[error: <type>: <message>]" in its slot."""
        texts = _prompt_list(prompts, "llm_query_batched")
        if not texts:
            return []
        results = self._sub_call("llm", texts, None if model is None else str(model), None)
        return [_slot_text(results[i] if i < len(results) else None) for i in range(len(texts))]

    def rlm_query(self, prompt: Any, context: Any = None) -> str:
        """A nested RLM over `context` (or a plain sub-call at the depth limit)."""
        text = _prompt(prompt, "rlm_query")
        ctx = None if context is None else str(context)
        results = self._sub_call("rlm", [text], None, ctx)
        return _slot_value(results[0] if results else None, "rlm_query")

    def rlm_query_batched(self, prompts: Any, context: Any = None) -> list[str]:
        texts = _prompt_list(prompts, "rlm_query_batched")
        if not texts:
            return []
        ctx = None if context is None else str(context)
        results = self._sub_call("rlm", texts, None, ctx)
        return [_slot_text(results[i] if i < len(results) else None) for i in range(len(texts))]

    def where(self, offset: Any, path: Any = None) -> str:
        """"PATH:ADDRESS" of a character offset into `context` (or into the text of the
        document `path`), e.g. "report.pdf:page 3, line 12": cite it as [doc:PATH:ADDRESS]."""
        if isinstance(offset, bool) or not isinstance(offset, int):
            raise TypeError(f"where: offset must be an int, got {type(offset).__name__}")
        docs = self._addresses
        context = self._names["context"]
        if path is not None:
            found = [i for i, d in enumerate(docs) if d[2] == str(path)]
            if not found:
                raise ValueError(f"where: no document with path {str(path)[:200]!r}")
            start, chars, name, fmt, spans = docs[found[0]]
            local = offset
            if isinstance(context, str):               # the document's text, not cut out of it
                text = context
            else:
                text, start = context[found[0]], 0
        elif not isinstance(context, str):
            raise ValueError("where: `context` is a list here, one str per document: "
                             "give the document, where(offset, path)")
        else:
            # The document whose text (or header line before it, or "\n\n" after it) holds offset.
            index = bisect.bisect_left(self._ends, offset + 1) if 0 <= offset < len(context) else len(docs)
            if index >= len(docs):
                raise ValueError(f"where: offset {offset} is outside `context` (0..{len(context) - 1})")
            start, chars, name, fmt, spans = docs[index]
            text = context
            local = min(max(offset - start, 0), chars)
        if not 0 <= local <= chars:
            raise ValueError(f"where: offset {offset} is outside {name} (0..{chars})")
        from core.ingest.address import address_in   # imported on first use only
        local = min(local, max(chars - 1, 0))          # the "\n\n" after a text: its last character
        return f"{name}:{address_in(text, spans, fmt, local, start, chars)}"

    def FINAL(self, value: Any) -> None:   # noqa: N802 - the name the model uses
        """End the run with str(value) as the answer (the cell still finishes)."""
        text = str(value)
        with self._lock:
            self.final = {"kind": "FINAL", "value": text}

    def FINAL_VAR(self, name: Any) -> None:   # noqa: N802
        """End the run with a variable's value: FINAL_VAR("answer") or FINAL_VAR(answer)."""
        user = self.user_vars()
        if isinstance(name, str) and name.strip() in self.globals and name.strip() not in RESERVED:
            value = self.globals[name.strip()]
        elif not isinstance(name, str):
            value = name
        elif any(v is name for v in user.values()):
            value = name
        else:
            print(f"FINAL_VAR: no variable named {name[:80]!r}; variables: {self._describe_vars()}. "
                  "Nothing was returned; assign the answer to a variable first, "
                  "or call FINAL(text).", file=sys.stderr)
            return
        text = str(value)
        with self._lock:
            self.final = {"kind": "FINAL_VAR", "value": text}

    def SHOW_VARS(self) -> VarListing:   # noqa: N802
        """Names and types of your variables (not the REPL's own names)."""
        listing = VarListing((k, type(v).__name__) for k, v in sorted(self.user_vars().items()))
        if listing:
            print("\n".join(f"{k}: {t}" for k, t in listing.items()))
        else:
            print("(no variables yet)")
        return listing


_MISSING = object()
