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


def test_steps_run_in_order_in_a_nice_thread_until_done():
    from core.background import low_priority_steps
    seen = []

    def steps():
        for n in range(5):
            seen.append((n, threading.current_thread().name, _niceness()))
            yield

    before = _niceness()
    work = low_priority_steps(steps(), name="rlm-test-steps")
    assert work.future.result(timeout=10) is None
    assert [n for n, _, _ in seen] == list(range(5))
    assert {name for _, name, _ in seen} == {"rlm-test-steps"}
    if sys.platform.startswith("linux"):
        assert all(nice > before or nice == 19 for _, _, nice in seen)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")
def test_hurry_takes_the_remaining_steps_at_the_callers_priority():
    from core.background import low_priority_steps
    gate = threading.Event()
    seen = []

    def steps():
        seen.append(("first", _niceness()))
        yield
        gate.wait(10)                  # the nice thread is held here until hurry() was called
        seen.append(("second", _niceness()))
        yield
        seen.append(("third", _niceness()))
        yield

    before = _niceness()
    work = low_priority_steps(steps(), name="rlm-test-hurry")
    while not seen:
        threading.Event().wait(0.01)
    work.hurry()
    gate.set()
    assert work.future.result(timeout=10) is None
    assert [what for what, _ in seen] == ["first", "second", "third"]
    assert seen[0][1] > before or seen[0][1] == 19
    # the step in progress when hurried ends in the nice thread; every later one is the hurried thread's
    assert seen[2][1] == before
    work.hurry()                       # idempotent once done


def test_an_error_in_a_step_reaches_the_future_and_no_later_step_runs():
    from core.background import low_priority_steps
    seen = []

    def steps():
        seen.append(1)
        yield
        raise OSError("the disk is full")

    work = low_priority_steps(steps())
    with pytest.raises(OSError, match="the disk is full"):
        work.future.result(timeout=10)
    work.hurry()
    assert seen == [1]
