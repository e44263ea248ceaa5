import pytest

from core.engine.budget import Budget, BudgetExceeded


def test_reservations_never_let_spend_cross_the_cap():
    b = Budget(max_cost_usd=1.0, max_sub_calls=None)
    r1 = b.reserve(0.6)
    with pytest.raises(BudgetExceeded) as info:
        b.reserve(0.5)
    assert info.value.cap == "cost"
    b.settle(r1, 0.1, 100, 10)
    r2 = b.reserve(0.5)
    assert b.spent_usd + b.reserved_usd <= 1.0
    b.release(r2)
    assert b.reserved_usd == 0 and b.in_flight == 0
    assert b.refusals == 1 and b.overruns == 0


def test_no_cap_means_no_refusal():
    b = Budget(max_cost_usd=None, max_sub_calls=None)
    for _ in range(100):
        b.settle(b.reserve(10.0), 10.0, 1, 1)
    assert b.spent_usd == pytest.approx(1000.0)


def test_sub_call_cap():
    b = Budget(max_cost_usd=None, max_sub_calls=2)
    b.count_sub_call()
    b.count_sub_call()
    with pytest.raises(BudgetExceeded) as info:
        b.count_sub_call()
    assert info.value.cap == "sub_calls" and b.sub_calls == 2


def test_settle_and_release_are_idempotent_per_reservation():
    b = Budget(max_cost_usd=1.0, max_sub_calls=None)
    r = b.reserve(0.5)
    b.release(r)
    b.release(r)
    assert b.in_flight == 0 and b.reserved_usd == 0


async def test_acquire_waits_for_reservations_to_settle_instead_of_refusing():
    import asyncio
    b = Budget(max_cost_usd=1.0, max_sub_calls=None)
    first = await b.acquire(0.8)
    waiter = asyncio.ensure_future(b.acquire(0.5))
    await asyncio.sleep(0.01)
    assert not waiter.done()                 # only the reservation is in the way
    b.settle(first, 0.1, 10, 10)             # the real cost was far below the worst case
    second = await asyncio.wait_for(waiter, 1)
    assert b.reserved_usd == 0.5 and b.spent_usd == 0.1
    with pytest.raises(BudgetExceeded):      # spent alone leaves no room: refused at once
        b2 = Budget(max_cost_usd=1.0, max_sub_calls=None)
        b2.settle(b2.reserve(0.9), 0.9, 1, 1)
        await b2.acquire(0.2)
    b.release(second)
