"""The evaluator interface and the selection policy (``shuffleamp.evaluate``) and the typed call settings.

Checked against their documented rules: every family's plan ends with the certified FFT engine and follows the
listed order; each evaluator of the interface answers with the same certified number as the dispatch that
selects it; binary RR's route follows its documented thresholds; the up-front refusal of a too large mechanism
names its parameter; the settings are immutable and a copy gets its own memo; the choices inside the
evaluators (a continuous part's Bromwich integral or convex order, the convex order's law, the FFT engine's
spectral or inverse-FFT route) follow their documented thresholds, each answer is the selected evaluator's own
number, and the policy's evaluators bracket independent oracles (tests/laplace_oracles.py, tests/oracle.py).
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


# ------------------------------------------------------------------ the choices inside the evaluators
def test_continuous_plan_follows_the_documented_thresholds():
    """A continuous part: the Bromwich integral first from CONTINUOUS_EXACT_MIN_N users when its central work
    estimate fits CONTINUOUS_EXACT_WORK, the convex order otherwise; the answer is the selected evaluator's own
    certified number."""
    from shuffleamp import exact as X
    from shuffleamp.mechanisms import laplace_upper_gparv
    g = laplace_upper_gparv(1.0, 0.3)
    names, law = E.continuous_plan(g, 2000)
    assert names == ("bromwich", "convex") and X.bromwich_work(law) <= E.CONTINUOUS_EXACT_WORK
    for mode in ("upper", "lower"):
        assert E.delta_continuous(g, 2000, mode).delta == X.delta_continuous_bromwich(law, 2000, mode,
                                                                                   E.CONTINUOUS_EXACT_WORK).delta
    assert E.continuous_plan(g, E.CONTINUOUS_EXACT_MIN_N - 1) == (("convex",), None)
    assert E.delta_continuous(g, 100, "upper").delta == E.delta_convex(g, 100, "upper").delta
    # next to eps0 at small n a heavy atom keeps the integrand from decaying: over the work estimate -> convex
    g2 = laplace_upper_gparv(8.0, 7.9)
    names, law = E.continuous_plan(g2, 400)
    assert names == ("convex",)


def test_convex_plan_and_its_laws():
    """The convex order: a law the enumeration evaluates at small n (at least CONVEX_ENUM_MIN_ATOMS atoms fit),
    the default cells at large n; delta_convex returns that law's certified evaluation (the first law within
    CONVEX_FINE_WORK)."""
    from shuffleamp import exact as X
    from shuffleamp.mechanisms import laplace_lower_gparv
    g = laplace_lower_gparv(1.0, 0.5)
    assert E.convex_plan(g, 4)[0] == "enumerated"
    assert X.enumerable_atoms(4, X.ENUMERATE_MAX, E.CONVEX_ENUM_MAX_ATOMS) >= E.CONVEX_ENUM_MIN_ATOMS
    assert E.convex_plan(g, 5000) == ("default", "medium-coarse", "uncapped")
    for n, first in ((4, "enumerated"), (5000, "default")):
        for upper in (True, False):
            if first == "enumerated":
                kmax = X.enumerable_atoms(n, X.ENUMERATE_MAX, E.CONVEX_ENUM_MAX_ATOMS)
                law = X.convex_enumerated_law(g, n, upper, kmax)
            else:
                law = X.convex_law(g, n, upper)
            ev = X.convex_evaluation(g, n, law, upper, first == "default", None, X.ENUMERATE_MAX, E.CONVEX_FINE_WORK)
            assert E.delta_convex(g, n, "upper" if upper else "lower").delta == ev.delta


def test_convex_and_continuous_bracket_independent_oracles():
    """The policy's evaluators of the Laplace GPARVs against the independent oracles of tests/laplace_oracles.py:
    at n = 3 the convex-order bracket of the exact sums (brute force over cells), at n = 2000 the oracle's own
    Bromwich integral (scipy quadrature); upper >= truth >= lower within the oracles' stated errors."""
    import laplace_oracles as LO
    from shuffleamp.mechanisms import laplace_lower_gparv, laplace_upper_gparv
    eps0, eps = 1.0, 0.4
    for law, g in ((LO.blanket_law(eps0, eps), laplace_upper_gparv(eps0, eps)),
                   (LO.pair_law(eps0, eps), laplace_lower_gparv(eps0, eps))):
        lo_o, hi_o = LO.convex_bracket(law, 3)
        assert E.delta_continuous(g, 3, "upper").delta >= lo_o * (1 - 1e-9)
        assert E.delta_continuous(g, 3, "lower").delta <= hi_o * (1 + 1e-9)
        v, err = LO.positive_part_bromwich(law, 2000)
        assert E.delta_continuous(g, 2000, "upper").delta >= v - err
        assert E.delta_continuous(g, 2000, "lower").delta <= v + err
        assert E.delta_continuous(g, 2000, "upper").delta <= (v + err) * (1 + 1e-3)


def test_spectral_route_follows_the_documented_thresholds():
    """The FFT engine's route: the spectral evaluator within SPECTRAL_MAX_POINTS frequencies for lattice laws of
    at most SPECTRAL_MAX_ATOMS grid atoms, the inverse FFT otherwise; "auto" reports the route taken and
    brackets the exact enumeration (tests/oracle.py) of a small k-RR law."""
    from oracle import gparv_positive_part
    assert E.spectral_budget(E.SPECTRAL_MAX_ATOMS, 2**20) == E.SPECTRAL_MAX_POINTS
    assert E.spectral_budget(E.SPECTRAL_MAX_ATOMS + 1, 2**20) == 0
    assert E.spectral_budget(10, 2**31) == 0
    g = _cached_families(KRR(1.0, 4), "upper")[0].gparv(0.3)
    n = 6
    truth = gparv_positive_part(g.values, g.probs, n)
    up = E.delta_fft(g, n, "spread", rtol=1e-4)
    lo = E.delta_fft(g, n, "spread_lower", rtol=1e-4)
    assert up.evaluator == "spectral" and lo.delta <= truth <= up.delta
    assert up.delta == E.delta_fft(g, n, "spread", rtol=1e-4, evaluator=lambda atoms, N: E.SPECTRAL_MAX_POINTS).delta
    from shuffleamp.mechanisms import laplace_upper_gparv
    gl = laplace_upper_gparv(1.0, 0.3)           # a binned continuous part on a grid of more atoms than the cap
    lo_, hi_ = gl.support
    assert E.delta_fft(gl, 50, "spread", l=(hi_ - lo_) / (2 * E.SPECTRAL_MAX_ATOMS)).evaluator == "fft"
    assert E.delta_fft(gl, 50, "spread", l=(hi_ - lo_) / (E.SPECTRAL_MAX_ATOMS // 4)).evaluator == "spectral"
