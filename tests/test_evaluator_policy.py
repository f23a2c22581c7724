"""The evaluator interface and the selection policy (``shuffleamp.evaluate``) and the typed call settings.

Checked against their documented rules: every family's plan ends with the certified FFT engine and follows the
listed order; each evaluator of the interface answers with the same certified number as the dispatch that
selects it; binary RR's route follows its documented thresholds; the up-front refusal of a too large mechanism
names its parameter; the settings are immutable and a copy gets its own memo.
"""

import dataclasses
import math

import pytest

import shuffleamp as sa
from shuffleamp import evaluate as E
from shuffleamp._registry import Settings
from shuffleamp.decomposition import Decomposition
from shuffleamp.errors import ResourceLimitError
from shuffleamp.families import _cached_families
from shuffleamp.mechanisms import BLH, KRR, Laplace


@pytest.mark.parametrize("mech, n", [(KRR(1.0, 10), 50), (BLH(0.7), 10**6), (Laplace(1.0), 100),
                                     (Laplace(1.0), 10**5)])
def test_plan_follows_the_policy_and_ends_with_the_fft_engine(mech, n):
    """plan(): the evaluators of selection() in order, each with a finite positive cost, FFT last; an atomic
    decomposition is planned on the exact evaluator; a continuous part first on the continuous evaluator and,
    up to CONTINUOUS_FFT_MAX_N users, on the FFT engine next."""
    for f in _cached_families(mech, "upper"):
        names = [name for name, _ in E.plan(f, n, 0.3)]
        assert names[-1] == "fft"
        for _, cost in E.plan(f, n, 0.3):
            assert isinstance(cost, E.Cost) and 0 < cost.seconds < math.inf and 0 < cost.nbytes < math.inf
        if isinstance(f, Decomposition):
            assert names == ["exact", "fft"]
        else:
            g = f.gparv(0.3)
            assert names[0] == "continuous" and g.continuous is not None
            assert names == (["continuous", "fft"] if n <= E.CONTINUOUS_FFT_MAX_N else ["continuous", "exact", "fft"])


def test_each_evaluator_answers_as_the_dispatch():
    """The interface's evaluator chosen first gives exactly max_delta's certified value (upper and lower)."""
    mech, n, eps = KRR(1.0, 10), 200, 0.4
    f = _cached_families(mech, "upper")[0]
    name = E.plan(f, n, eps)[0][0]
    for mode in ("spread", E.LOWER_MODE):
        ev = E.FAMILY_EVALUATORS[name](f, None, n, eps, mode, E.DEFAULT_RTOL, 2**20)
        assert ev.delta == E.max_delta([f], n, eps, mode)[0]
        assert ev.delta > 0


@pytest.mark.parametrize("eps0, n, want_eps, tight, route", [
    (0.1, 100, True, False, "decomposition-upper"),
    (0.1, 100, True, True, "count-law"),
    (0.1, 100, False, True, "decomposition-upper"),
    (0.1, E.DECOMPOSITION_MAX_N, False, False, "count-law"),
    (E.DECOMPOSITION_MAX_EPS0, 100, False, False, "count-law"),
])
def test_binary_rr_route(eps0, n, want_eps, tight, route):
    assert E.binary_rr_plan(eps0, n, want_eps, tight) == route


def test_binary_rr_default_records_the_route(monkeypatch):
    """Where the policy says count law only, the decomposition is recorded as skipped; where both engines run
    (a δ query at small n and eps0), the count law is computed once for the point and read by both steps."""
    from shuffleamp import exact_count
    calls = []
    point = exact_count.default_point

    def counted(*args, **kw):
        calls.append(args)
        return point(*args, **kw)
    monkeypatch.setattr(exact_count, "default_point", counted)
    r = sa.epsilon(KRR(1.0, 2), 10**5, 1e-9)
    assert r.settings["upper_engine"] == "exact-count"
    assert "skipped" in r.settings["grid"]["decomposition"]
    calls.clear()
    d = sa.delta(KRR(0.1, 2), 100, 0.05)
    assert E.binary_rr_plan(0.1, 100, False, False) == "decomposition-upper"
    assert "decomposition" in d.settings["grid"] and "exact_count" in d.settings["grid"]
    assert len(calls) == 1


def test_search_cost_refuses_a_mechanism_too_large_for_the_budget():
    mech = KRR(1.0, 10)
    lists = (_cached_families(mech, "upper"), _cached_families(mech, "lower"))
    cost = E.search_cost(lists)
    assert cost.seconds == E.max_atoms(lists) * E.ATOM_NODE_SECONDS * E.NODES_PER_EVALUATION * E.EVALUATIONS_PER_SEARCH
    with pytest.raises(ResourceLimitError) as exc:
        sa.epsilon(mech, 1000, 1e-8, max_seconds=0.5 * cost.seconds)
    assert exc.value.parameter == "max_seconds"


def test_settings_are_frozen_and_copies_have_their_own_memo():
    s = Settings(1e-3, 1e-4, 2**20, "exact", 10.0, 2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.rtol = 0.1
    s.memo["x"] = 1
    t = s.with_(eps_rtol=1e-6)
    assert t.eps_rtol == 1e-6 and s.eps_rtol == 1e-7 and t.memo == {} and s.memo == {"x": 1}
    assert t == dataclasses.replace(s, eps_rtol=1e-6)
    with pytest.raises(TypeError):
        s.with_(epsilon_rtol=1e-6)
