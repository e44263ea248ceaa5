"""core/background.py: work beside a run, in its own thread, at a lower CPU priority."""

import os
import sys
import threading

import pytest

from core.background import low_priority_call


def _niceness() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def test_the_result_comes_back_from_a_thread_of_its_own():
    seen = {}

    def work(a, b, *, c):
        seen["thread"] = threading.current_thread().name
        return a + b + c

    assert low_priority_call(work, 1, 2, c=3, name="rlm-test-background").result(timeout=10) == 6
    assert seen["thread"] == "rlm-test-background"


def test_an_error_reaches_the_caller():
    def fail():
        raise ValueError("the disk is full")

    with pytest.raises(ValueError, match="the disk is full"):
        low_priority_call(fail).result(timeout=10)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")
def test_the_thread_runs_nicer_than_its_caller_and_the_caller_keeps_its_priority():
    before = _niceness()
    inside = low_priority_call(_niceness).result(timeout=10)
    assert inside > before or inside == 19
    assert _niceness() == before
