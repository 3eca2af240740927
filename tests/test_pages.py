"""NumPy's huge-page advice is off while rankflavor evaluates and comes back afterwards."""

from __future__ import annotations

import importlib
import threading

import pytest

import rankflavor
from rankflavor import pages
from rankflavor.pages import small_pages

setter = pages._setter()
pytestmark = pytest.mark.skipif(setter is None, reason="this NumPy has no huge-page switch")


def advice() -> bool:
    """NumPy's current setting (read by setting it and putting it back)."""
    assert setter is not None
    now = setter(True)
    setter(now)
    return now


@pytest.fixture(autouse=True)
def advice_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    assert setter is not None
    before = setter(True)
    yield
    setter(before)


def test_off_inside_and_back_after() -> None:
    with small_pages():
        assert advice() is False
        with small_pages():  # re-entrant
            assert advice() is False
        assert advice() is False
    assert advice() is True


def test_back_after_an_error() -> None:
    with pytest.raises(ValueError), small_pages():
        raise ValueError("boom")
    assert advice() is True


def test_threads_share_it_until_the_last_one_ends() -> None:
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with small_pages():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    inside.wait(10)
    with small_pages():
        assert advice() is False
    assert advice() is False  # the other thread still evaluates
    release.set()
    thread.join(10)
    assert advice() is True


def test_a_setting_chosen_at_start_up_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
    with small_pages():
        assert advice() is True


def test_evaluate_runs_without_it_and_restores_it(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    plan = importlib.import_module("rankflavor.plan")  # evaluate aligns through the plan
    real = plan.align

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(advice())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(plan, "align", spy)
    res = rankflavor.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}}, "ndcg@10")
    assert res[0].mean == pytest.approx(1.0)
    assert seen == [False]
    assert advice() is True
