"""``rankflavor.base.threads.SharedWork``: tasks two threads share, each run once, in task order."""

from __future__ import annotations

import pytest

from rankflavor.base.threads import SharedWork


@pytest.mark.parametrize("true_at", [None, 0, 7, 19])
def test_shared_checks_run_each_check_once_on_two_threads(true_at: int | None) -> None:
    """Two threads share the duplicate checks: each check runs at most once, every check runs
    when none finds a repeat, and both threads stop soon after one does. (A first version read
    the worker's return value, which said "no repeat" when the worker ran out of checks while
    this thread's last check was still finding one.)"""
    import threading
    import time

    ran: list[int] = []
    started_by_then: list[int] = []

    def check(k: int) -> bool:
        ran.append(k)
        time.sleep(0.001)  # let the other thread take the next one
        if k == true_at:
            started_by_then.append(len(ran))
        return k == true_at

    shared = SharedWork([lambda k=k: check(k) for k in range(20)], until=bool)
    other = threading.Thread(target=shared.run)
    other.start()
    shared.run()  # may return while the other thread's check still runs
    other.join(timeout=10)
    assert shared.stopped == (true_at is not None)
    assert len(ran) == len(set(ran))
    if true_at is None:
        assert sorted(ran) == list(range(20))
    else:
        # Once a check finds a repeat, the other thread may start at most one more.
        assert true_at in ran and len(ran) <= started_by_then[0] + 1


def test_shared_work_keeps_task_order_and_raises_where_it_ran() -> None:
    """Two threads take the tasks one at a time; each result lands at its task's place, and a
    task's error surfaces in the thread that ran it."""
    import threading
    import time

    def task(k: int) -> int:
        time.sleep(0.001 * (k % 3))  # uneven, so the threads interleave
        return k * k

    shared = SharedWork([lambda k=k: task(k) for k in range(30)])
    other = threading.Thread(target=shared.run)
    other.start()
    shared.run()
    other.join(timeout=10)
    assert shared.results == [k * k for k in range(30)]

    def failing() -> int:
        raise ValueError("task 1")

    alone = SharedWork([lambda: 0, failing, lambda: 2])
    with pytest.raises(ValueError, match="task 1"):
        alone.run()
