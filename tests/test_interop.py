"""shuffleamp.interop: the shuffled-round DpEvent, the shuffle-aware PLD accountant, extra mechanisms
of compose_rounds and their neighbouring relations."""

import importlib
import importlib.metadata
import math
import sys

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting.mechanism_calibration import ExplicitBracketInterval, calibrate_dp_mechanism
from dp_accounting.pld import privacy_loss_distribution as dpl
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from scipy import stats

import shuffleamp as sa
from shuffleamp import _extras
from shuffleamp import accounting as acc
from shuffleamp.errors import ParameterError
from shuffleamp.interop import (CHECKED_DP_ACCOUNTING_VERSIONS, PLDAccountant, ShuffledRoundEvent,
                                UnsupportedEventError)
from shuffleamp.mechanisms import KRR

#: compose_rounds' time budget in these tests: generous (they test values, not the budget; a loaded
#: machine's wall clock can be several times the CPU time)
TOTAL_SECONDS = 300.0


NR = dpa.NeighboringRelation


def gaussian_replace_one_delta(sigma: float, k: int, eps: float) -> float:
    """Exact δ(ε) of k composed Gaussian mechanisms (noise multiplier σ) under replace-one: the pair
    N(0, σ²) vs N(2, σ²) per step (sensitivity 2C for a sum of norm-C values), i.e. μ-GDP with
    μ = 2√k/σ (Balle and Wang, "Improving the Gaussian Mechanism for Differential Privacy", ICML 2018,
    Theorem 8)."""
    mu = 2.0 * math.sqrt(k) / sigma
    return float(stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2))


# ---------------------------------------------------------------------------- the event
@pytest.mark.parametrize("mech, n", [(KRR(1.0, 10), 10**6), (sa.joint([KRR(0.5, 3), KRR(0.5, 4)]), 1000),
                                     (sa.population([(KRR(0.5, 10), 600), (KRR(2.0, 10), 400)]), None)])
def test_event_round_trips_through_named_tuple(mech, n):
    e = ShuffledRoundEvent(mech, n)
    back = dpa.DpEvent.from_named_tuple(e.to_named_tuple())
    assert isinstance(back, ShuffledRoundEvent) and back == e
    assert back.n == (1000 if n is None else n)
    nested = dpa.SelfComposedDpEvent(dpa.ComposedDpEvent([e, dpa.GaussianDpEvent(2.0)]), 3)
    assert dpa.DpEvent.from_named_tuple(nested.to_named_tuple()) == nested


def test_event_bad_input():
    with pytest.raises(ParameterError) as e:
        ShuffledRoundEvent(KRR(1.0, 10), 0)
    assert e.value.parameter == "n"
    with pytest.raises(ParameterError) as e:
        ShuffledRoundEvent(KRR(1.0, 10), float("nan"))
    assert e.value.parameter == "n"
    with pytest.raises(ParameterError) as e:
        ShuffledRoundEvent("krr", 100)
    assert e.value.parameter == "mechanism"
    pop = sa.population([(KRR(0.5, 10), 600), (KRR(2.0, 10), 400)])
    with pytest.raises(ParameterError) as e:
        ShuffledRoundEvent(pop, 999)
    assert e.value.parameter == "n"


# ---------------------------------------------------------------------------- the accountant
def test_import_without_dp_accounting_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "dp_accounting", None)       # as if it were not installed
    monkeypatch.delitem(sys.modules, "shuffleamp.interop")
    with pytest.raises(ImportError, match=r"pip install 'shuffleamp\[dp\]'"):
        importlib.import_module("shuffleamp.interop")


def test_checked_dp_accounting_version():
    # the accountant reads the parent's private '_pld' (one place): re-read the parent's source and
    # extend CHECKED_DP_ACCOUNTING_VERSIONS when dp_accounting changes
    assert importlib.metadata.version("dp-accounting") in CHECKED_DP_ACCOUNTING_VERSIONS
    parent = dpa.pld.PLDAccountant(NR.REPLACE_ONE)
    assert isinstance(parent._pld, dpl.PrivacyLossDistribution)
    assert parent._contains_non_dp_event is False
    assert _extras.TAIL_MASS_TRUNCATION == acc.TAIL_MASS_TRUNCATION


def test_year_of_10rr_matches_compose_rounds():
    m, n, R = KRR(1.0, 10), 10**6, 365
    year = dpa.SelfComposedDpEvent(ShuffledRoundEvent(m, n), R)
    a = PLDAccountant().compose(year)
    assert a.supports(year)
    ref = sa.compose_rounds([(m, n, R)], delta=1e-8)
    up = a.get_epsilon(1e-8)
    assert abs(up / ref.upper - 1) <= 0.005
    lo = a.get_epsilon_lower(1e-8)
    assert 0.5 * ref.upper < lo <= min(up, ref.upper)
    # ComposedDpEvent of single rounds: the same upper
    b = PLDAccountant(lower=False).compose(dpa.ComposedDpEvent([ShuffledRoundEvent(m, n)] * 5))
    c = PLDAccountant(lower=False).compose(dpa.SelfComposedDpEvent(ShuffledRoundEvent(m, n), 5))
    assert b.get_epsilon(1e-8) == pytest.approx(c.get_epsilon(1e-8), rel=1e-6)
    r = a.bracket(delta=1e-8)
    assert r.upper == up and r.lower == lo and r.rounds[0][2] == R
    rd = a.bracket(epsilon=up)
    assert rd.quantity == "delta" and rd.lower <= rd.upper <= 1e-8 * (1 + 1e-9)


def _sgd(steps):
    return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), steps)


def _total_at_least_each_part(steps, lower_refine, d=1e-4):
    year = dpa.SelfComposedDpEvent(ShuffledRoundEvent(KRR(1.0, 10), 10**6), 365)

    def fresh():
        return PLDAccountant(value_discretization_interval=d, lower_refine=lower_refine)

    alone_year = fresh().compose(year)
    alone_sgd = fresh().compose(_sgd(steps))
    both = fresh().compose(year).compose(_sgd(steps))
    for delta in (1e-5, 1e-8):
        t = both.get_epsilon(delta)
        assert t >= alone_year.get_epsilon(delta) and t >= alone_sgd.get_epsilon(delta)
        lo = both.get_epsilon_lower(delta)
        assert lo <= t
        assert lo >= alone_year.get_epsilon_lower(delta) and lo >= alone_sgd.get_epsilon_lower(delta)
    # the parent alone gives the same DP-SGD number (the accountant defers to it)
    parent = dpa.pld.PLDAccountant(NR.REPLACE_ONE, d).compose(_sgd(steps))
    assert alone_sgd.get_epsilon(1e-8) == parent.get_epsilon(1e-8)


def test_year_plus_dp_sgd_is_at_least_each_part_fast():
    _total_at_least_each_part(50, lower_refine=2, d=5e-4)


@pytest.mark.slow
def test_year_plus_dp_sgd_is_at_least_each_part():
    _total_at_least_each_part(1000, lower_refine=8)


@pytest.mark.parametrize("k", [1, 4])
def test_gaussian_bracket_contains_exact(k):
    sigma = 3.0
    a = PLDAccountant(value_discretization_interval=5e-4, lower_refine=2).compose(
        dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(sigma), k))
    for eps in (0.0, 0.5, 1.0, 2.0):
        exact = gaussian_replace_one_delta(sigma, k, eps)
        # at grid points connect-the-dots is exact up to float round-off (not charged by dp_accounting)
        assert a.get_delta_lower(eps) <= exact <= a.get_delta(eps) * (1 + 1e-12) + 1e-15
        assert a.get_delta(eps) <= exact * 1.02 + 1e-12


def test_randomized_response_is_composed_count_times():
    rr = dpa.RandomizedResponseDpEvent(0.5, 2)
    a = PLDAccountant().compose(dpa.SelfComposedDpEvent(rr, 10))
    b = PLDAccountant().compose(dpa.ComposedDpEvent([rr] * 10))
    assert a.get_epsilon(1e-6) == pytest.approx(b.get_epsilon(1e-6), rel=1e-6)
    one = PLDAccountant().compose(rr).get_epsilon(1e-6)
    assert a.get_epsilon(1e-6) > 5 * one
    assert a.get_epsilon_lower(1e-6) <= a.get_epsilon(1e-6)
    assert a.get_epsilon_lower(1e-6) > 0.99 * a.get_epsilon(1e-6)


def test_unsupported_and_bad_input():
    e = ShuffledRoundEvent(KRR(1.0, 10), 10**4)
    a = PLDAccountant()
    bad = dpa.ComposedDpEvent([e, dpa.LaplaceDpEvent(1.0)])       # Laplace: add/remove only in the parent
    assert not a.supports(bad)
    with pytest.raises(UnsupportedEventError) as x:
        a.compose(bad)
    assert x.value.parameter == "event" and "LaplaceDpEvent" in str(x.value)
    assert isinstance(x.value, dpa.UnsupportedEventError) and isinstance(x.value, ParameterError)
    for ev in (dpa.UnsupportedDpEvent(), dpa.PoissonSampledDpEvent(0.1, e),
               dpa.SelfComposedDpEvent(dpa.ComposedDpEvent([e, dpa.UnsupportedDpEvent()]), 2)):
        assert not a.supports(ev)
        with pytest.raises(UnsupportedEventError):
            a.compose(ev)
    assert a.ledger == dpa.NoOpDpEvent() or isinstance(a.ledger, dpa.ComposedDpEvent)
    assert a.get_epsilon(1e-6) == 0.0                # nothing was composed
    with pytest.raises(ParameterError) as x:
        a.compose("gaussian")
    assert x.value.parameter == "event"
    with pytest.raises(ParameterError) as x:
        a.compose(e, 0)
    assert x.value.parameter == "count"
    for rel in (NR.ADD_OR_REMOVE_ONE, NR.REPLACE_SPECIAL, "add_or_remove_one", "nonsense", None):
        with pytest.raises(ParameterError) as x:
            PLDAccountant(rel)
        assert x.value.parameter == "neighboring_relation"
    assert PLDAccountant("replace_one").neighboring_relation is NR.REPLACE_ONE
    with pytest.raises(ParameterError) as x:
        PLDAccountant(value_discretization_interval=0.0)
    assert x.value.parameter == "value_discretization_interval"
    a.compose(e)
    with pytest.raises(ParameterError) as x:
        a.get_epsilon_lower(float("nan"))
    assert x.value.parameter == "target_delta"
    with pytest.raises(ParameterError):
        a.bracket()


def test_population_and_composition_rounds():
    pop = sa.population([(KRR(0.5, 10), 6 * 10**5), (KRR(2.0, 10), 4 * 10**5)])
    j = sa.joint([KRR(0.5, 3), KRR(0.5, 4)])
    a = PLDAccountant().compose(dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(ShuffledRoundEvent(pop), 10),
                                                     ShuffledRoundEvent(j, 10**5)]))
    ref = sa.compose_rounds([(pop, None, 10), (j, 10**5, 1)], delta=1e-8, lower=False, max_seconds=TOTAL_SECONDS)
    up = a.get_epsilon(1e-8)
    assert abs(up / ref.upper - 1) < 0.02
    assert 0 < a.get_epsilon_lower(1e-8) <= up
    # one round alone: the certified single-round lower bound is part of the accountant's
    one = PLDAccountant().compose(ShuffledRoundEvent(KRR(1.0, 10), 10**6))
    assert one.get_epsilon_lower(1e-8) >= sa.epsilon(KRR(1.0, 10), 10**6, 1e-8).lower


def test_non_private_event():
    a = PLDAccountant().compose(dpa.ComposedDpEvent([ShuffledRoundEvent(KRR(1.0, 10), 10**4),
                                                     dpa.NonPrivateDpEvent()]))
    assert a.get_epsilon(1e-6) == math.inf
    assert 0 < a.get_epsilon_lower(1e-6) < math.inf
    assert a.privacy_loss_distribution() is None
    for ev in (dpa.NonPrivateDpEvent(), dpa.GaussianDpEvent(0.0)):
        with pytest.raises(ParameterError) as e:
            sa.compose_rounds([(KRR(1.0, 2), 10_000, 3)], delta=1e-6, extra_plds=[ev],
                              value_discretization_interval=1e-3)
        assert e.value.parameter == "extra_plds"


# ---------------------------------------------------------------------------- calibration
def test_calibrate_rounds_agrees_with_max_rounds():
    m, n, d = KRR(1.0, 10), 10**5, 1e-4
    R = acc.max_rounds(m, n, 1.0, 1e-8, value_discretization_interval=d)
    got = calibrate_dp_mechanism(lambda: PLDAccountant(value_discretization_interval=d, lower=False),
                                 lambda r: dpa.SelfComposedDpEvent(ShuffledRoundEvent(m, n), r),
                                 1.0, 1e-8, ExplicitBracketInterval(1, 4 * R), discrete=True)
    # max_rounds charges the composition's floating-point round-off (a certified R); the accountant's
    # get_epsilon is dp_accounting's own, which does not. So R <= got, and got is at most the largest R
    # whose dp_accounting total (no round-off charged) fits, found here by direct composition.
    pld = acc.to_pld(m, n, value_discretization_interval=d)
    lo_r, hi_r = R, 2 * R
    while hi_r - lo_r > 1:                       # largest r with the uncharged total <= 1 (monotone in r)
        mid = (lo_r + hi_r) // 2
        if pld.self_compose(mid).get_epsilon_for_delta(1e-8) <= 1.0:
            lo_r = mid
        else:
            hi_r = mid
    assert R - 1 <= got <= lo_r
    assert lo_r <= R * 1.01                      # the round-off charge costs under 1 % of the rounds


def _calibrate_eps0(n, R, rel_tol):
    target = 1.0
    e0 = acc.max_eps0(KRR(1.0, 10), n, R, target, 1e-8, rel_tol=rel_tol)
    got = calibrate_dp_mechanism(PLDAccountant,
                                 lambda x: dpa.SelfComposedDpEvent(ShuffledRoundEvent(KRR(x, 10), n), R),
                                 target, 1e-8, ExplicitBracketInterval(0.05, 8.0), tol=rel_tol * e0)
    # both return a fitting ε0 within their tolerance of the root; the grids differ by < 0.2 % in ε
    assert abs(got / e0 - 1) <= 2 * rel_tol + 1e-3
    assert PLDAccountant().compose(dpa.SelfComposedDpEvent(ShuffledRoundEvent(KRR(got, 10), n), R)) \
        .get_epsilon(1e-8) <= target


def test_calibrate_eps0_finds_the_root_fast():
    n, R, target, tol = 10**5, 30, 0.2, 0.01
    got = calibrate_dp_mechanism(PLDAccountant,
                                 lambda x: dpa.SelfComposedDpEvent(ShuffledRoundEvent(KRR(x, 10), n), R),
                                 target, 1e-8, ExplicitBracketInterval(0.5, 4.0), tol=tol)
    # the answer fits, and one tolerance above it compose_rounds (an independent grid) exceeds the budget
    assert PLDAccountant().compose(dpa.SelfComposedDpEvent(ShuffledRoundEvent(KRR(got, 10), n), R)) \
        .get_epsilon(1e-8) <= target
    assert sa.compose_rounds([(KRR(got + 2 * tol, 10), n, R)], delta=1e-8, lower=False).upper > target


@pytest.mark.slow
def test_calibrate_eps0_agrees_with_max_eps0():
    _calibrate_eps0(10**4, 365, 1e-3)


# ---------------------------------------------------------------------------- compose_rounds extras
def test_add_remove_gaussian_is_refused():
    m, d = KRR(1.0, 2), 1e-4
    add_remove = dpl.from_gaussian_mechanism(1.0, value_discretization_interval=d)
    for kw in ({}, {"neighboring_relation": NR.ADD_OR_REMOVE_ONE}, {"neighboring_relation": "replace_special"}):
        with pytest.raises(ParameterError) as e:
            sa.compose_rounds([(m, 10_000, 3)], delta=1e-6, extra_plds=[add_remove],
                              value_discretization_interval=d, **kw)
        assert e.value.parameter == "extra_plds"
    # mixed relations: a PLD recording replace-one next to a declared add/remove
    ours = sa.to_pld(KRR(1.0, 3), 10**5, value_discretization_interval=d)
    with pytest.raises(ParameterError) as e:
        sa.compose_rounds([(m, 10_000, 3)], delta=1e-6, extra_plds=[ours], value_discretization_interval=d,
                          neighboring_relation="add_or_remove_one")
    assert e.value.parameter == "neighboring_relation"
    # mixed relations between PLDs that record theirs
    other = _extras.tag(dpl.from_gaussian_mechanism(2.0, value_discretization_interval=d), NR.ADD_OR_REMOVE_ONE)
    with pytest.raises(ParameterError) as e:
        sa.compose_rounds([(m, 10_000, 3)], delta=1e-6, extra_plds=[ours, other], value_discretization_interval=d)
    assert e.value.parameter == "extra_plds" and "mixed" in str(e.value)
    for bad in ([object()], 3, [dpa.LaplaceDpEvent(1.0)]):
        with pytest.raises(ParameterError) as e:
            sa.compose_rounds([(m, 10_000, 3)], delta=1e-6, extra_plds=bad, value_discretization_interval=d)
        assert e.value.parameter == "extra_plds"
    with pytest.raises(ParameterError) as e:
        sa.compose_rounds([(m, 10_000, 3)], delta=1e-6, extra_plds=[ours], value_discretization_interval=d,
                          neighboring_relation="sideways")
    assert e.value.parameter == "neighboring_relation"


def test_extra_events_enter_upper_and_lower():
    m, n, R, d = KRR(1.0, 2), 10_000, 3, 5e-4
    sigma = 4.0
    base = sa.compose_rounds([(m, n, R)], delta=1e-6, value_discretization_interval=d)
    with_event = sa.compose_rounds([(m, n, R)], delta=1e-6, value_discretization_interval=d,
                                   extra_plds=[dpa.GaussianDpEvent(sigma)])
    pld = dpl.from_gaussian_mechanism(sigma, value_discretization_interval=d, neighboring_relation=NR.REPLACE_ONE)
    with_pld = sa.compose_rounds([(m, n, R)], delta=1e-6, value_discretization_interval=d, extra_plds=[pld],
                                 neighboring_relation="replace_one")
    # the same Gaussian PLD either way; the certified round-off charges of the composition (about 1e-12 in
    # delta) depend on the PMF representation and move epsilon by ~1e-8 relative
    assert with_event.upper == pytest.approx(with_pld.upper, rel=1e-7)
    assert with_event.upper >= base.upper
    # the event's optimistic PLD raises the lower bound; the PLD alone cannot
    assert with_event.lower > base.lower + 0.05 and with_event.lower <= with_event.upper
    assert with_pld.lower == pytest.approx(base.lower, rel=1e-12)
    assert "left out" in with_pld.lower_method
    # the lower bound with the event is below the exact Gaussian-alone total: a sanity bracket
    g_exact = next(e for e in np.linspace(0, 5, 5001) if gaussian_replace_one_delta(sigma, 1, e) <= 1e-6)
    assert with_event.upper >= g_exact - 1e-3


# ---------------------------------------------------------------------------- an exact mixed composition
def exact_gaussian_plus_rr_delta(sigma, k_gauss, p, k_rr, eps) -> float:
    """Exact δ(ε) of k_gauss Gaussian steps (noise multiplier σ) composed with k_rr binary randomized
    responses (noise parameter p), replace-one.  Independent losses add: the RR part's loss is
    (k_rr - 2j) L with j ~ Bin(k_rr, p/2), L = log((1 - p/2)/(p/2)), and for a Gaussian part of
    parameter μ, E_P[(1 - e^{ε' - L_G})_+] = Φ(-ε'/μ + μ/2) - e^{ε'} Φ(-ε'/μ - μ/2) for every real ε'."""
    mu = 2.0 * math.sqrt(k_gauss) / sigma
    L = math.log((1 - p / 2) / (p / 2))
    j = np.arange(k_rr + 1)
    w = stats.binom.pmf(j, k_rr, p / 2)
    e = eps - (k_rr - 2 * j) * L
    dg = stats.norm.cdf(-e / mu + mu / 2) - np.exp(e) * stats.norm.cdf(-e / mu - mu / 2)
    return float(np.sum(w * dg))


@settings(max_examples=examples(20), deadline=None)
@given(sigma=st.floats(2.0, 8.0), k_gauss=st.integers(1, 5), p=st.floats(0.3, 0.95), k_rr=st.integers(1, 6),
       eps=st.floats(0.0, 3.0))
def test_mixed_composition_bracket_contains_exact(sigma, k_gauss, p, k_rr, eps):
    a = PLDAccountant(value_discretization_interval=1e-3, lower_refine=2).compose(dpa.ComposedDpEvent([
        dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(sigma), k_gauss),
        dpa.SelfComposedDpEvent(dpa.RandomizedResponseDpEvent(p, 2), k_rr)]))
    exact = exact_gaussian_plus_rr_delta(sigma, k_gauss, p, k_rr, eps)
    assert a.get_delta_lower(eps) <= exact * (1 + 1e-9) + 1e-12
    assert exact <= a.get_delta(eps) * (1 + 1e-9) + 1e-12
