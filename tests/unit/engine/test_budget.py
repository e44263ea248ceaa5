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


# ---- calls shortened to fit (Budget.acquire_call) ------------------------------------------
async def test_a_call_too_dear_at_full_length_is_granted_what_the_room_affords():
    b = Budget(max_cost_usd=0.01, max_sub_calls=None)
    # input $0.002 at worst, output $2/M: 4,000 tokens would cost $0.008 + $0.002 = $0.010 (fits);
    # with $0.001 kept for the root it does not: 3,500 tokens do ($0.002 + $0.007 + $0.001).
    r, granted = await b.acquire_call(0.002, 2e-6, 4000, 256, keep_usd=0.001)
    assert granted == 3500 and r.usd == pytest.approx(0.009)
    assert b.spent_usd + b.reserved_usd + 0.001 <= 0.01 + 1e-12
    b.settle(r, 0.003, 1000, 500)
    r2, granted2 = await b.acquire_call(0.002, 2e-6, 4000, 256, keep_usd=0.001)
    assert granted2 == 2000                   # $0.01 - 0.003 spent - 0.001 kept - 0.002 input = 0.004
    b.release(r2)


async def test_a_call_is_refused_only_when_its_input_and_the_floor_cannot_be_paid():
    b = Budget(max_cost_usd=0.01, max_sub_calls=None)
    b.settle(b.reserve(0.0085), 0.0085, 1, 1)
    r, granted = await b.acquire_call(0.001, 2e-6, 4000, 200)        # $0.0005 left: 250 tokens
    assert granted == 250
    b.release(r)
    with pytest.raises(BudgetExceeded) as info:
        await b.acquire_call(0.001, 2e-6, 4000, 300)
    assert info.value.cap == "cost" and "shortest useful reply (300 tokens" in str(info.value)
    with pytest.raises(BudgetExceeded):
        await b.acquire_call(0.002, 2e-6, 4000, 1)                  # the input alone does not fit
    assert b.reserved_usd == 0 and b.in_flight == 0


async def test_the_floor_never_exceeds_what_was_asked():
    b = Budget(max_cost_usd=0.001, max_sub_calls=None)
    r, granted = await b.acquire_call(0.0001, 1e-6, 50, 256)        # asks 50: the floor is 50
    assert granted == 50
    b.release(r)


async def test_acquire_call_waits_for_others_when_the_whole_call_fits_once_they_settle():
    import asyncio
    b = Budget(max_cost_usd=0.01, max_sub_calls=None)
    first, _ = await b.acquire_call(0.001, 1e-6, 8000, 256)          # $0.009 reserved
    waiter = asyncio.ensure_future(b.acquire_call(0.001, 1e-6, 8000, 256))
    await asyncio.sleep(0.01)
    assert not waiter.done()                  # it would be shortened to 0: it waits instead
    b.settle(first, 0.002, 1000, 1000)
    r, granted = await asyncio.wait_for(waiter, 1)
    assert granted == 7000                    # 0.01 - 0.002 - 0.001 input = 0.007 / 1e-6
    b.release(r)


async def test_a_waiting_call_that_is_cancelled_holds_nothing():
    import asyncio
    b = Budget(max_cost_usd=0.01, max_sub_calls=None)
    first, _ = await b.acquire_call(0.001, 1e-6, 9000, 256)
    waiter = asyncio.ensure_future(b.acquire_call(0.001, 1e-6, 9000, 256))
    await asyncio.sleep(0.01)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    b.release(first)
    assert b.reserved_usd == 0 and b.in_flight == 0


async def test_random_calls_shortened_to_fit_never_cross_the_cap():
    import asyncio
    import random
    rng = random.Random(7)
    for trial in range(40):
        cap = rng.uniform(0.001, 0.05)
        b = Budget(max_cost_usd=cap, max_sub_calls=None)
        keep = rng.choice([0.0, cap * rng.uniform(0, 0.5)])
        granted_all, refused = [], 0

        async def call() -> None:
            nonlocal refused
            per = rng.choice([1e-6, 2e-6, 1e-5])
            want = rng.choice([256, 1000, 4096, 8192])
            try:
                r, granted = await b.acquire_call(rng.uniform(0, cap / 4), per, want, 256, keep_usd=keep)
            except BudgetExceeded:
                refused += 1
                return
            assert b.spent_usd + b.reserved_usd + keep <= cap + 1e-12
            assert min(256, want) <= granted <= want
            granted_all.append(granted)
            await asyncio.sleep(rng.uniform(0, 0.003))
            b.settle(r, r.usd * rng.uniform(0, 1), 1, 1)        # real cost at most the reservation
        await asyncio.gather(*(call() for _ in range(rng.randint(1, 20))))
        assert b.reserved_usd < 1e-12 and b.in_flight == 0 and b.spent_usd <= cap + 1e-12, trial
