"""What to run: one RunRequest for every kind of run (ask, follow-up, fork, re-run, rebuild).

    request = RunRequest.ask(question, documents, config)     # or .follow_up/.fork/.rerun/.rebuild
    prepared = await prepare_run(request, runs=store)         # core/engine/prepare.py

Apart from the preparation so that whoever only builds requests (the window's start, a
command's flags) imports nothing else of the engine. A request that cannot run says why
when it is made (ValueError).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

KINDS = ("ask", "follow-up", "fork", "re-run", "rebuild")


@dataclass(frozen=True)
class RunRequest:
    """What to run. `kind` says where the REPL and conversation come from:
    ask / re-run: a fresh REPL over `documents` (re-run: linked to `parent_run_id`);
    follow-up: the live `session` of run `parent_run_id`, a new question in it;
    fork: run `parent_run_id` rebuilt up to root turn `fork_turn` by re-execution
    (`edited_code` run by the engine as the fork's turn 1, its new sub-calls the fork's own), then live;
    rebuild: the REPL of run `parent_run_id` rebuilt by re-execution, then `question`
    asked in it as a follow-up. Fork and rebuild take question and documents from the store."""
    kind: str
    question: str = ""
    documents: tuple = ()
    skipped: tuple = ()
    config: Any = None                 # core.config.RunConfig (fork: None = the parent's)
    session: Any = None                # core.engine.outcome.Session (follow-up)
    parent_run_id: str | None = None
    fork_turn: int | None = None
    edited_code: str | None = None
    fork_overrides: dict = field(default_factory=dict)   # fork without `config`: changes to the parent's
    keep_session: bool = False         # keep the REPL alive after the run (the window's follow-ups)
    run_id: str | None = None
    evaluation_id: str | None = None   # an evaluation's question (core/evaluation): tagged, kept out of History
    shared_budget: Any = None          # a Budget many runs reserve from (a grid's: core/grid)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown run kind {self.kind!r} (one of {', '.join(KINDS)})")
        if self.kind in ("follow-up", "fork", "re-run", "rebuild") and not self.parent_run_id:
            raise ValueError(f"a {self.kind} needs the run it comes from")
        if self.kind == "follow-up" and self.session is None:
            raise ValueError("a follow-up needs the live session of the run it follows")
        if self.kind == "fork" and self.fork_turn is None:
            raise ValueError("a fork needs the turn to fork from")
        if self.kind == "rebuild" and self.config is None:
            raise ValueError("a rebuild needs the config its follow-up runs with")
        if self.kind != "fork" and not self.question.strip():
            raise ValueError("the question is empty")
        if self.kind in ("ask", "re-run", "follow-up") and not self.documents:
            raise ValueError("there are no readable documents to ask about")

    @property
    def rebuilds(self) -> bool:
        """Whether preparing it re-executes a stored run (a fork, a rebuild)."""
        return self.kind in ("fork", "rebuild")

    @classmethod
    def ask(cls, question: str, documents: Sequence[Any], config: Any, *, skipped: Sequence[Any] = (),
            **more: Any) -> "RunRequest":
        return cls("ask", question, tuple(documents), tuple(skipped), config, **more)

    @classmethod
    def rerun(cls, parent_run_id: str, question: str, documents: Sequence[Any], config: Any, *,
              skipped: Sequence[Any] = (), **more: Any) -> "RunRequest":
        return cls("re-run", question, tuple(documents), tuple(skipped), config,
                   parent_run_id=parent_run_id, **more)

    @classmethod
    def follow_up(cls, parent_run_id: str, session: Any, question: str, documents: Sequence[Any],
                  config: Any, *, skipped: Sequence[Any] = (), **more: Any) -> "RunRequest":
        return cls("follow-up", question, tuple(documents), tuple(skipped), config, session=session,
                   parent_run_id=parent_run_id, **more)

    @classmethod
    def fork(cls, parent_run_id: str, turn: int, *, config: Any = None, edited_code: str | None = None,
             **more: Any) -> "RunRequest":
        return cls("fork", config=config, parent_run_id=parent_run_id, fork_turn=turn,
                   edited_code=edited_code, **more)

    @classmethod
    def rebuild(cls, parent_run_id: str, question: str, config: Any, **more: Any) -> "RunRequest":
        return cls("rebuild", question, config=config, parent_run_id=parent_run_id, **more)
