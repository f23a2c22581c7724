"""The work a plan's evaluation shares (shuffleamp._reuse) changes no number.

A plan's report evaluates each collection's total and then the grand total; within one evaluation the certified
profile of a family at an ε is computed once (:func:`shuffleamp._reuse.pointwise`), the size estimate of a
privacy-loss distribution once per accountant call (:func:`shuffleamp._reuse.remember`), and the accountant's
lower bound composes the concrete pair it chose from the candidates' compositions instead of composing it again.
Every number must be bit-identical to an evaluation without any of that: each collection's total to
:func:`shuffleamp.accounting.compose_rounds` called on its own, the grand total's composition to
``compose_rounds`` of all the collections' rounds called on its own, both with the sharing switched off.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from shuffleamp import _reuse, accounting
from shuffleamp.config import parse_plan, plan_total
from shuffleamp.exact import delta_exact_profile
from shuffleamp.errors import ResourceLimitError
from shuffleamp.mechanisms import BLH, KRR, OUE, RAPPOR
from shuffleamp.plans import plan_max, report

#: A small plan that takes every shared path: k-RR (k = 10) has the largest support edge, so the grand total's
#: grid step is its own and its profile points are the ones its collection total computed; BLH's lower bound
#: chooses between two concrete pairs by composing both; binary RR composes its exact count pair; RAPPOR has a
#: single round (no composition); the schedule composes three fresh rounds.
PLAN = {
    "budget": {"epsilon": 8.0, "delta": 1e-6},
    "collection": [
        {"name": "emoji", "mechanism": "krr", "k": 10, "eps0": 4.0, "n": 1_000_000, "delta": 1e-8, "rounds": 30},
        {"name": "toggle", "mechanism": "krr", "k": 2, "eps0": 0.5, "n": 10_000, "rounds": 3},
        {"name": "crash", "mechanism": "blh", "eps0": 3.0, "n": 1_000_000, "delta": 1e-8, "rounds": 6},
        {"name": "homepage", "mechanism": "rappor", "d": 128, "eps0": 2.0, "n": 10_000_000, "delta": 1e-9},
        {"name": "survey", "mechanism": "krr", "k": 4, "schedule": [0.5, 2.0], "n": 100_000, "delta": 1e-8},
    ],
}


@contextlib.contextmanager
def _nothing_shared():
    """Every sharing path off: no scopes (pointwise and remember compute every time) and no reuse of the chosen
    pair's composition."""
    compose_all = accounting._compose_all
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_reuse, "scope", contextlib.nullcontext)
        mp.setattr(_reuse, "call_scope", contextlib.nullcontext)
        mp.setattr(accounting, "_compose_all", lambda parts, extra=(), composed=None: compose_all(parts, extra))
        yield


def _counting(calls):
    def compute(t):
        calls.append(t.copy())
        return np.stack([np.sin(t), np.cos(t)])
    return compute


@pytest.fixture(scope="module")
def shared_and_not():
    """The plan's report with and without sharing, and the work each did (profile points evaluated, privacy-loss
    distributions self-composed)."""
    plan = parse_plan(json.loads(json.dumps(PLAN)))
    work = {}
    chunks, self_compose = accounting._exact_profile_chunks, accounting.PrivacyLossDistribution.self_compose
    with pytest.MonkeyPatch.context() as mp:
        def count_points(f, n, eps, mode):
            work[key] = (work[key][0] + np.size(eps), work[key][1])
            return chunks(f, n, eps, mode)

        def count_compose(pld, *a, **kw):
            work[key] = (work[key][0], work[key][1] + 1)
            return self_compose(pld, *a, **kw)

        mp.setattr(accounting, "_exact_profile_chunks", count_points)
        mp.setattr(accounting.PrivacyLossDistribution, "self_compose", count_compose)
        key = "shared"
        work[key] = (0, 0)
        got = report(plan, progress=False)
        key = "not shared"
        work[key] = (0, 0)
        with _nothing_shared():
            ref = report(plan, progress=False)
    return plan, got, ref, work


def test_the_plan_takes_every_shared_path(shared_and_not):
    work = shared_and_not[3]
    assert work["shared"][0] < work["not shared"][0]      # profile points evaluated once
    assert work["shared"][1] < work["not shared"][1]      # the chosen pair's composition reused


def test_report_is_identical_with_and_without_sharing(shared_and_not):
    _, got, ref, _ = shared_and_not
    assert got == ref                                   # every key and float of every collection and the total


def test_collection_totals_equal_compose_rounds_on_its_own(shared_and_not):
    plan, got, _, _ = shared_and_not
    d = plan.budget["delta"]
    with _nothing_shared():
        for row, res in zip(plan, got["collections"]):
            if row.schedule is not None or row.rounds == 1:
                continue
            acc = accounting.compose_rounds([(row.build(), row.n, row.rounds)], delta=d)
            assert (res["total"]["epsilon_upper"], res["total"]["epsilon_lower"]) == (acc.upper, acc.lower), row.name


def test_grand_total_equals_compose_rounds_of_all_rounds(shared_and_not):
    plan, got, _, _ = shared_and_not
    parts = [(r.build(), r.n, 1 if r.schedule is not None else r.rounds) for r in plan]
    with _nothing_shared():
        acc = accounting.compose_rounds(parts, delta=plan.budget["delta"])
    # the report's total is that composition with the collections' totals as floors (none applies here)
    assert got["total"]["floors"] == []
    assert (got["total"]["epsilon_upper"], got["total"]["epsilon_lower"]) == (acc.upper, acc.lower)
    # and plan_total inside one evaluation scope, after the collections, gives the same
    with _reuse.scope():
        report_again = plan_total(plan, results=got["collections"])
    assert report_again == got["total"]


@pytest.mark.slow
def test_default_plan_totals_with_and_without_sharing():
    """The shipped plan: the report's collection totals and grand total equal the evaluation without sharing."""
    got = report(None, progress=False)
    with _nothing_shared():
        ref = report(None, progress=False)
    assert [c["total"] for c in got["collections"]] == [c["total"] for c in ref["collections"]]
    assert got["total"] == ref["total"]


@pytest.mark.slow
@pytest.mark.parametrize("parameter", ["rounds", "eps0"])
def test_plan_max_is_identical_with_and_without_sharing(parameter):
    """A plan-level query shares one scope over its whole search (the collections that do not change keep their
    profile points from probe to probe): the same answer, the same evaluated totals."""
    plan = parse_plan({"budget": {"epsilon": 0.5, "delta": 1e-7}, "collection": [
        {"name": "histogram", "mechanism": "krr", "k": 4, "eps0": 1.0, "n": 20_000, "rounds": 4},
        {"name": "sites", "mechanism": "rappor", "d": 8, "eps0": 1.0, "n": 20_000, "rounds": 2}]})
    got = plan_max(plan, "histogram", parameter, progress=False)
    with _nothing_shared():
        ref = plan_max(plan, "histogram", parameter, progress=False)
    assert got == ref


def test_scopes_end_with_the_evaluation(shared_and_not):
    assert _reuse._EVALUATION.get() is None and _reuse._CALL.get() is None


# --------------------------------------------------------------------------- the pointwise table
def test_pointwise_computes_each_point_once_and_returns_the_same_values():
    x = np.array([[0.0, 0.5], [1.0, 0.5]])
    calls = []
    outside = _reuse.pointwise("k", x, _counting(calls))
    assert outside.shape == (2, 2, 2) and len(calls) == 1
    calls.clear()
    with _reuse.scope():
        first = _reuse.pointwise("k", x, _counting(calls))
        again = _reuse.pointwise("k", np.array([1.0, 2.0, -0.0]), _counting(calls))
        other_key = _reuse.pointwise("other", np.array([1.0]), _counting(calls))
    np.testing.assert_array_equal(first, outside)
    assert [c.tolist() for c in calls] == [[0.0, 0.5, 1.0], [2.0, -0.0], [1.0]]   # -0.0 is its own point
    assert np.signbit(calls[1][1])
    np.testing.assert_array_equal(again, np.stack([np.sin([1.0, 2.0, -0.0]), np.cos([1.0, 2.0, -0.0])]))
    np.testing.assert_array_equal(other_key, [[np.sin(1.0)], [np.cos(1.0)]])
    with _reuse.scope():                                # a new scope starts empty
        _reuse.pointwise("k", np.array([0.5]), _counting(calls))
    assert calls[-1].tolist() == [0.5]


def test_remember_is_per_call_and_keyed_by_the_held_object():
    held, other = object(), object()
    assert _reuse.remember(("k", id(held)), held, lambda: 1) == 1             # outside a call: computed
    with _reuse.call_scope():
        assert _reuse.remember(("k", id(held)), held, lambda: 2) == 2
        assert _reuse.remember(("k", id(held)), held, lambda: 3) == 2
        assert _reuse.remember(("k", id(held)), other, lambda: 4) == 4          # same key, another object
        with _reuse.call_scope():                                               # a nested call: its own table
            assert _reuse.remember(("k", id(held)), held, lambda: 5) == 5


@pytest.mark.parametrize("mechanism,n", [(KRR(4.0, 10), 10**6), (OUE(8.0, 1024), 10**8), (BLH(3.0), 10**6),
                                         (RAPPOR(1.0), 10**8)])
def test_exact_profile_of_an_epsilon_does_not_depend_on_the_batch(mechanism, n):
    """What pointwise needs of the certified profile: an ε's value alone equals its value in any batch."""
    fams = accounting._families(mechanism, "upper", n) + list(mechanism.lower_decompositions())[:2]
    eps = np.linspace(0.0, 0.05, 37)
    for f in fams:
        for mode in ("spread", "both"):
            batch = delta_exact_profile(f, n, eps, mode=mode)
            ones = np.stack([delta_exact_profile(f, n, eps[i:i + 1], mode=mode)[..., 0] for i in range(eps.size)],
                            axis=-1)
            np.testing.assert_array_equal(batch, ones)
            np.testing.assert_array_equal(batch[..., ::-1], delta_exact_profile(f, n, eps[::-1], mode=mode))


def test_threads_sharing_one_scope_get_the_serial_values():
    keys = [("f", i % 5) for i in range(64)]
    xs = [np.linspace(0.0, 1.0, 50 + 7 * (i % 3)) for i in range(64)]

    def compute_for(key):
        return lambda t: np.stack([t * (key[1] + 1), t + key[1]])

    serial = [compute_for(k)(x) for k, x in zip(keys, xs)]
    with _reuse.scope():
        ctx = contextvars.copy_context()
        with ThreadPoolExecutor(16) as ex:
            got = list(ex.map(lambda kx: ctx.copy().run(_reuse.pointwise, kx[0], kx[1], compute_for(kx[0])),
                              zip(keys, xs)))
    for a, b in zip(got, serial):
        np.testing.assert_array_equal(a, b)


def test_a_point_another_thread_computes_is_waited_for_not_computed_again():
    started, release, calls = threading.Event(), threading.Event(), []

    def slow(t):
        calls.append(("slow", t.tolist()))
        started.set()
        release.wait(10)
        return t * 2

    def fast(t):
        calls.append(("fast", t.tolist()))
        return t * 2

    with _reuse.scope():
        ctx = contextvars.copy_context()
        with ThreadPoolExecutor(1) as ex:
            first = ex.submit(ctx.run, _reuse.pointwise, "k", np.array([1.0, 2.0]), slow)
            assert started.wait(10)
            timer = threading.Timer(0.2, release.set)
            timer.start()
            second = _reuse.pointwise("k", np.array([2.0, 3.0]), fast)        # waits for 2.0, computes 3.0
            np.testing.assert_array_equal(first.result(), [2.0, 4.0])
    np.testing.assert_array_equal(second, [4.0, 6.0])
    assert calls == [("slow", [1.0, 2.0]), ("fast", [3.0])]


def test_a_failed_computation_is_computed_again_by_the_thread_that_waited():
    started, release = threading.Event(), threading.Event()

    def fails(t):
        started.set()
        release.wait(10)
        raise ResourceLimitError("stopped", parameter="max_seconds")

    with _reuse.scope():
        ctx = contextvars.copy_context()
        with ThreadPoolExecutor(1) as ex:
            first = ex.submit(ctx.run, _reuse.pointwise, "k", np.array([1.0]), fails)
            assert started.wait(10)
            threading.Timer(0.2, release.set).start()
            np.testing.assert_array_equal(_reuse.pointwise("k", np.array([1.0]), lambda t: t + 1), [2.0])
            with pytest.raises(ResourceLimitError):
                first.result()
