"""Laplace through the convex-order discretisation (:func:`shuffleamp.evaluate.delta_convex`).

Oracles (independent of the discretisation and of the atomic evaluator):

* n = 1 and n = 2: adaptive quadrature (scipy.integrate.quad) of the GPARV's density,
  :math:`E[G_+]` and :math:`E[(G_1+G_2)_+] = E[h(G_1)]`, :math:`h(x) = E[(x + G)_+]`;
* the mean :math:`E[G] = 1 - e^\\varepsilon` of every GPARV ([SCW] Definition 9): both finite laws
  must keep it (a mean-preserving spread and a conditional expectation);
* the previous certified evaluators (continuous-part Bromwich :func:`shuffleamp.exact.delta_exact`
  and the FFT engine): both sides certify the same quantity, so each upper >= each other lower.

Upper >= truth >= lower throughout; API cases from the latency reproducers must answer inside the
default budget with no RuntimeWarning and no ``budget_exhausted`` flag.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.integrate import quad

import shuffleamp as sa
from shuffleamp import evaluate as EV
from shuffleamp import exact as X
from shuffleamp.mechanisms import Laplace, laplace_lower_gparv, laplace_upper_gparv

FAMILIES = {"upper": laplace_upper_gparv, "lower": laplace_lower_gparv}


def _pieces(c):
    return list(zip([c.lo, *c.breaks], [*c.breaks, c.hi]))


def _h(g, x):
    """E[(x + G)_+] by quadrature of the density plus the atoms."""
    c = g.continuous
    tot = float(np.sum(np.maximum(x + g.values, 0.0) * g.probs))
    for a, b in _pieces(c):
        a2 = max(a, -x)
        if b > a2:
            tot += quad(lambda s: (x + s) * float(c.density(s)), a2, b, epsabs=0.0, epsrel=1e-12, limit=400)[0]
    return tot


def _oracle(g, n):
    """E[(G_1 + ... + G_n)_+] / n for n = 1, 2 by (nested) quadrature."""
    if n == 1:
        return _h(g, 0.0)
    c = g.continuous
    tot = float(sum(p * _h(g, v) for v, p in zip(g.values, g.probs)))
    for a, b in _pieces(c):
        # h(x) is 0 for x <= -max G and has kinks at -atoms: split there
        cuts = sorted({a, b, *[-v for v in g.values if a < -v < b], *([-g.support[1]] if a < -g.support[1] < b else [])})
        for u, w in zip(cuts[:-1], cuts[1:]):
            if w <= -g.support[1]:
                continue
            tot += quad(lambda s: _h(g, s) * float(c.density(s)), u, w, epsabs=0.0, epsrel=1e-10, limit=200)[0]
    return tot / 2


CASES_12 = [(0.5, 0.2), (1.0, 0.5), (1.0, 0.999), (4.0, 1.0), (4.0, 3.9)]


@pytest.mark.parametrize("which", ["upper", "lower"])
@pytest.mark.parametrize("eps0,eps", CASES_12)
def test_n1_n2_against_quadrature(which, eps0, eps):
    """Default laws at n = 1, 2 and the coarse exact laws at n = 2 against the quadrature oracle."""
    g = FAMILIES[which](eps0, eps)
    for n in (1, 2):
        want = _oracle(g, n)
        up = EV.delta_convex(g, n, "upper").delta
        lo = EV.delta_convex(g, n, "lower").delta
        assert lo <= want * (1 + 1e-9) + 1e-300, (n, lo, want)
        assert up >= want * (1 - 1e-9), (n, up, want)
        assert up - lo <= 1e-3 * want + 1e-300, (n, up, lo, want)
        if n == 2:      # the coarse laws of the cost rule, evaluated exactly, bracket it too
            c_up, c_lo = X.coarse_convex(g, n, True), X.coarse_convex(g, n, False)
            assert c_up is not None and c_lo is not None
            assert c_lo.delta <= want * (1 + 1e-9) + 1e-300 and c_up.delta >= want * (1 - 1e-9), (c_lo, want, c_up)


@pytest.mark.parametrize("which", ["upper", "lower"])
@pytest.mark.parametrize("eps0,eps,n", [(0.3, 0.1, 7), (1.0, 0.999, 30), (8.0, 4.0, 1138), (15.0, 3.0, 10 ** 6),
                                        (0.05, 0.01, 10 ** 8), (20.0, 5.0, 10 ** 6)])
def test_finite_laws_keep_the_mean_and_bracket(which, eps0, eps, n):
    """Both finite laws are probability laws with the GPARV's mean 1 - e^eps; the upper law's
    support is the GPARV's, the lower law's lies inside it; the lower result <= the upper result."""
    g = FAMILIES[which](eps0, eps)
    lo_s, hi_s = g.support
    for mode in ("upper", "lower"):
        v, p = X.convex_order_atoms(g, n, mode)
        assert np.all(p > 0) and abs(p.sum() - 1.0) <= 1e-12
        assert v.min() >= lo_s and v.max() <= hi_s
        mean = math.fsum(v * p)
        assert abs(mean - (-math.expm1(eps))) <= 1e-11 * max(1.0, float(np.max(np.abs(v * p))) * v.size)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert EV.delta_convex(g, n, "lower").delta <= EV.delta_convex(g, n, "upper").delta


@pytest.mark.parametrize("eps0,n,frac", [(0.5, 50, 0.2), (1.0, 1000, 0.05), (1.0, 20000, 0.2), (4.0, 300, 0.5)])
def test_against_previous_certified_evaluators(eps0, n, frac):
    """Same quantity, independent methods: convex upper >= Bromwich lower, convex lower <= Bromwich
    upper; the convex-order gap plus error is at most 1 % of delta."""
    for which, gf in FAMILIES.items():
        g = gf(eps0, frac * eps0)
        up, lo = EV.delta_convex(g, n, "upper").delta, EV.delta_convex(g, n, "lower").delta
        e_up, e_lo = X.delta_exact(g, n, "upper").delta, X.delta_exact(g, n, "lower").delta
        if e_up < 1e-20:      # far below any delta of interest: only ordering is checked
            assert up >= e_lo and lo <= e_up
            continue
        assert up >= e_lo and lo <= e_up, (which, up, lo, e_up, e_lo)
        assert up - lo <= 1e-2 * up, (which, up, lo)


def test_delta_decreases_in_epsilon():
    """A certified upper at eps_1 >= a certified lower at eps_2 > eps_1 (delta is decreasing in eps)."""
    for eps0, n in ((1.0, 10), (0.2, 150), (6.0, 3000)):
        eps = np.linspace(0.05, 0.99, 12) * eps0
        up = [EV.delta_convex(laplace_upper_gparv(eps0, e), n, "upper").delta for e in eps]
        lo = [EV.delta_convex(laplace_upper_gparv(eps0, e), n, "lower").delta for e in eps]
        assert all(up[i] >= lo[j] for i in range(len(eps)) for j in range(i, len(eps)))


REPRODUCERS = [(1.0, 10, 1e-8), (1.0, 2, 1e-6), (5.0, 5, 1e-8), (0.2197874749112497, 3, 2.8384578618040706e-11),
               (0.35650201837120554, 134, 2.0745871356178815e-11), (1.7520280907085986, 105, 1.5334824858103428e-3),
               (0.22778029401697306, 178, 3.9092863372479814e-4), (15.0, 10 ** 6, 1e-8), (8.0, 1138, 1e-8),
               # the slowest Laplace cases of bench/bench_latency.py's suite (ids 488, 1762, 106)
               (7.3729473070774105, 26, 1.4211313074809834e-10), (8.49886411837531, 12, 3.436939764331285e-12),
               (7.226674306794751, 140, 5.460758983338833e-05), (12.0, 1200, 1e-8)]


@pytest.mark.parametrize("eps0,n,target", REPRODUCERS)
def test_reproducers_answer(eps0, n, target):
    """Answers (no refusal, no exhausted budget, no RuntimeWarning); certified sides are ordered and
    the upper is consistent with the certified delta at that epsilon."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        r = sa.epsilon(Laplace(eps0), n, target)
    assert 0.0 <= r.lower <= r.upper <= eps0
    assert "budget_exhausted" not in str(r.settings)
    d = sa.delta(Laplace(eps0), n, r.upper)
    assert d.upper <= target * (1 + 1e-6)


def test_epsilon_monotone_in_n_and_delta():
    """True epsilon decreases in n and in delta: a certified lower at the larger n (delta) is below the
    certified upper at the smaller one."""
    m = Laplace(1.5)
    rs = [sa.epsilon(m, n, 1e-6) for n in (3, 30, 300, 3000)]
    assert all(rs[i + 1].lower <= rs[i].upper for i in range(len(rs) - 1))
    rs = [sa.epsilon(m, 40, d) for d in (1e-10, 1e-7, 1e-4)]
    assert all(rs[i + 1].lower <= rs[i].upper for i in range(len(rs) - 1))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n", [3, 9])
def test_zero_split_against_bruteforce(seed, n):
    """The binomial split on a heavy atom at 0 (upper keeps the charged tail, lower drops it) against
    the brute-force enumeration of tests/oracle.py on random atomic laws."""
    from oracle import gparv_positive_part
    rng = np.random.default_rng(seed)
    v = np.concatenate([[0.0], rng.normal(-0.5, 1.0, 6)])
    p = np.concatenate([[0.85], rng.random(6)])
    p[1:] *= 0.15 / p[1:].sum()
    want = gparv_positive_part(v, p, n)
    up = X._zero_split(v, p, n, True, 1e-4, X.ENUMERATE_MAX)
    lo = X._zero_split(v, p, n, False, 1e-4, X.ENUMERATE_MAX)
    assert up is not None and lo is not None
    assert up[0] + up[1] >= want * (1 - 1e-12) and lo[0] - lo[1] <= want * (1 + 1e-12)
    assert (up[0] + up[1]) - (lo[0] - lo[1]) <= 1e-3 * want


def test_delta_continuous_dispatch(monkeypatch):
    """Large n: the continuous-part integral when its estimated work fits CONTINUOUS_EXACT_WORK, else the
    convex-order evaluation; the rule depends on (G, n) only (no memory of earlier calls, no clock); both
    sides stay ordered against each other."""
    g = laplace_upper_gparv(1.0, 0.3)
    n = 2000
    assert X.bromwich_work(X.continuous_law(g, n)) <= EV.CONTINUOUS_EXACT_WORK
    assert EV.continuous_plan(g, n)[0] == ("bromwich", "convex")
    fast = EV.delta_continuous(g, n, "upper")
    assert fast.delta == X.delta_exact(g, n, "upper").delta
    monkeypatch.setattr(EV, "CONTINUOUS_EXACT_WORK", 1.0)
    assert EV.continuous_plan(g, n) == (("convex",), None)
    up = EV.delta_continuous(g, n, "upper")
    assert up.delta == EV.delta_convex(g, n, "upper").delta
    assert EV.delta_continuous(g, n, "upper").delta == up.delta
    lo = EV.delta_continuous(g, n, "lower")
    assert lo.delta == EV.delta_convex(g, n, "lower").delta
    assert lo.delta <= fast.delta and X.delta_exact(g, n, "lower").delta <= up.delta


def test_bromwich_work_cap_is_deterministic():
    """A work cap below the central panels' estimate refuses before integrating; with the cap the refusal is
    a ResourceLimitError that is not about the call's time or memory budget."""
    from shuffleamp.errors import ResourceLimitError
    g = laplace_lower_gparv(7.3729473070774105, 5.4997)
    v, p, _ = X._conditioned(*X.convex_order_atoms(g, 26, "lower"), 26, False)
    K = X.LogMgf(v, p)
    w = X.bromwich_work(X._AtomLaw(K, 26))
    assert w > 0
    with pytest.raises(ResourceLimitError) as ei:
        X._positive_part(K, 26, 1e-4, 0, max_work=0.5 * w)
    assert ei.value.parameter not in ("max_seconds", "max_memory_gb")
    with pytest.raises(ResourceLimitError):        # the integral itself needs more than the cost rule's cap
        X._positive_part(K, 26, 1e-4, 0, max_work=EV.CONVEX_FINE_WORK)


#: (eps0, eps, n): the large-eps0 small-n regime of the latency suite (a heavy atom in the lower dataset).
COARSE_CASES = [(7.3729473070774105, 5.4997, 26), (8.49886411837531, 7.3654, 12), (9.911005710454754, 6.9968, 26),
                (7.226674306794751, 6.5, 140), (2.0, 1.5, 5), (0.5, 0.3, 40)]


@pytest.mark.parametrize("which", ["upper", "lower"])
@pytest.mark.parametrize("eps0,eps,n", COARSE_CASES)
def test_coarse_laws_keep_the_mean(which, eps0, eps, n):
    """Explicit coarse cells (one cell per piece spans many log-distances to the density's pole): the laws'
    masses and means come from the graded sub-cells, so both keep the GPARV's mean 1 - e^eps and its support
    (a mean-preserving spread / a conditional expectation on any partition)."""
    g = FAMILIES[which](eps0, eps)
    lo_s, hi_s = g.support
    for ko, cells in X.CONVEX_COARSE_MIXTURE + tuple((None, c) for c in X.CONVEX_COARSE_CELLS):
        for mode in ("upper", "lower"):
            v, p = X.convex_order_atoms(g, n, mode, cells, cells, ko)
            assert np.all(p > 0) and abs(p.sum() - 1.0) <= 1e-12
            assert v.min() >= lo_s and v.max() <= hi_s
            mean = math.fsum(v * p)
            assert abs(mean - (-math.expm1(eps))) <= 1e-12 * max(1.0, float(np.max(np.abs(v)))), (ko, cells, mode)


@pytest.mark.parametrize("n", [3, 5])
@pytest.mark.parametrize("eps0,eps", [(4.0, 1.0), (7.0, 5.0), (1.0, 0.5)])
def test_coarse_convex_finite_laws_against_bruteforce(n, eps0, eps):
    """Each coarse law's exact evaluation (binomial-mixture sums, meet in the middle) against the brute-force
    enumeration of tests/oracle.py on the same finite law: the kernels' certified intervals contain it."""
    from oracle import gparv_positive_part
    from shuffleamp._ext import kernels
    for which, gf in FAMILIES.items():
        g = gf(eps0, eps)
        for upper in (True, False):
            side = "upper" if upper else "lower"
            for ko, cells in X.CONVEX_COARSE_MIXTURE:
                v, p = X.convex_order_atoms(g, n, side, cells, cells, ko)
                if v.size > 7 or v.max() <= 0:
                    continue
                want = gparv_positive_part(v, p / p.sum(), n)
                ok, val, err, _ = kernels.mixture_positive_part(v, p / p.sum(), float(n), 1e-3, X.CONVEX_COARSE_STEPS,
                                                                True)
                if ok:
                    assert val - err <= want * (1 + 1e-12) and val + err >= want * (1 - 1e-12)
            v, p = X.convex_order_atoms(g, n, side, 2, 2)
            if v.max() > 0 and math.comb(n + v.size - 1, v.size - 1) <= 2e5:
                want = gparv_positive_part(v, p / p.sum(), n)
                tot, err, st = kernels.small_n_positive_part(v, p / p.sum(), n, X.CONVEX_COARSE_POINTS)
                assert st == 0 and (tot - err) / n <= want * (1 + 1e-12) and (tot + err) / n >= want * (1 - 1e-12)


@pytest.mark.parametrize("eps0,eps,n", [
    (8.49886411837531, 7.3654, 12), (7.226674306794751, 3.33, 140),
    pytest.param(7.3729473070774105, 5.4997, 26, marks=pytest.mark.slow),
    pytest.param(9.911005710454754, 6.9968, 26, marks=pytest.mark.slow)])
def test_cost_rule_brackets_the_fine_evaluation(monkeypatch, eps0, eps, n):
    """Where the default law's evaluation exceeds CONVEX_FINE_WORK, delta_convex answers from the medium / coarse
    laws;
    against the fine evaluation (the cap lifted) of the same GPARV, certified sides stay ordered (coarse
    lower <= fine upper, coarse upper >= fine lower) and the coarse lower keeps at least 80 % of the fine lower
    (the design target of the coarse laws near the answer; at n = 140 they lose 13 %)."""
    g = laplace_lower_gparv(eps0, eps)
    up, lo = EV.delta_convex(g, n, "upper"), EV.delta_convex(g, n, "lower")
    monkeypatch.setattr(EV, "CONVEX_FINE_WORK", None)
    f_up, f_lo = EV.delta_convex(g, n, "upper"), EV.delta_convex(g, n, "lower")
    assert lo.delta <= f_up.delta and up.delta >= f_lo.delta, (lo, up, f_lo, f_up)
    assert lo.delta >= 0.8 * f_lo.delta


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_conditioning_always_against_bruteforce(seed):
    """Dropping the atoms at or below -(n-1) max G is exact even when the kept law has a non-negative mean
    (``always=True``, used before the exact sums): scale x E[S'_+] equals the brute-force E[S_+] of
    tests/oracle.py, with the scale rounded to the certified side."""
    from oracle import gparv_positive_part
    rng = np.random.default_rng(seed)
    n = 4
    v = np.sort(np.concatenate([[-50.0], rng.normal(0.2, 1.0, 5)]))
    p = rng.random(6) + 0.1
    p /= p.sum()
    want = gparv_positive_part(v, p, n)
    for upper in (True, False):
        v2, p2, sc = X._conditioned(v, p, n, upper, True)
        assert v2.size == 5 and 0.0 < sc < 1.0
        got = sc * gparv_positive_part(v2, p2 / p2.sum(), n)
        assert (got >= want * (1 - 1e-12)) if upper else (got <= want * (1 + 1e-12))
        assert abs(got - want) <= 1e-12 * want


def test_coarse_convex_next_to_eps0():
    """Next to eps0 at moderate n the upper GPARV's lowest atom is far below -(n-1) max G: the coarse laws are
    conditioned on the other terms and evaluated exactly (certified, above the coarse lower of the same GPARV),
    where the Bromwich integral of the default law only returns its error bound."""
    g = laplace_upper_gparv(12.0, 12.0 - 1e-9)
    n = 1200
    up, lo = X.coarse_convex(g, n, True), X.coarse_convex(g, n, False)
    assert up is not None and lo is not None
    assert 0.0 < lo.delta <= up.delta <= 1.01 * lo.delta
    assert lo.delta <= EV.delta_convex(g, n, "upper").delta <= up.delta
