"""Laplace through the convex-order discretisation (:func:`shuffleamp.exact.delta_convex`), issue 15.

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
    g = FAMILIES[which](eps0, eps)
    for n in (1, 2):
        want = _oracle(g, n)
        up = X.delta_convex(g, n, "upper").delta
        lo = X.delta_convex(g, n, "lower").delta
        assert lo <= want * (1 + 1e-9) + 1e-300, (n, lo, want)
        assert up >= want * (1 - 1e-9), (n, up, want)
        assert up - lo <= 1e-3 * want + 1e-300, (n, up, lo, want)


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
        assert X.delta_convex(g, n, "lower").delta <= X.delta_convex(g, n, "upper").delta


@pytest.mark.parametrize("eps0,n,frac", [(0.5, 50, 0.2), (1.0, 1000, 0.05), (1.0, 20000, 0.2), (4.0, 300, 0.5)])
def test_against_previous_certified_evaluators(eps0, n, frac):
    """Same quantity, independent methods: convex upper >= Bromwich lower, convex lower <= Bromwich
    upper; the convex-order gap plus error is at most 1 % of delta."""
    for which, gf in FAMILIES.items():
        g = gf(eps0, frac * eps0)
        up, lo = X.delta_convex(g, n, "upper").delta, X.delta_convex(g, n, "lower").delta
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
        up = [X.delta_convex(laplace_upper_gparv(eps0, e), n, "upper").delta for e in eps]
        lo = [X.delta_convex(laplace_upper_gparv(eps0, e), n, "lower").delta for e in eps]
        assert all(up[i] >= lo[j] for i in range(len(eps)) for j in range(i, len(eps)))


REPRODUCERS = [(1.0, 10, 1e-8), (1.0, 2, 1e-6), (5.0, 5, 1e-8), (0.2197874749112497, 3, 2.8384578618040706e-11),
               (0.35650201837120554, 134, 2.0745871356178815e-11), (1.7520280907085986, 105, 1.5334824858103428e-3),
               (0.22778029401697306, 178, 3.9092863372479814e-4), (15.0, 10 ** 6, 1e-8), (8.0, 1138, 1e-8)]


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
    """Large n: the continuous-part integral when it fits its short budget, else (remembered per key)
    the convex-order evaluation; both sides stay ordered against each other."""
    g = laplace_upper_gparv(1.0, 0.3)
    n = 2000
    fast = X.delta_continuous(g, n, "upper", key=("t", 1))
    assert fast.delta == X.delta_exact(g, n, "upper").delta
    monkeypatch.setattr(X, "CONTINUOUS_EXACT_TRY_SECONDS", 1e-9)
    monkeypatch.setattr(X, "_EXACT_TOO_SLOW", set())
    up = X.delta_continuous(g, n, "upper", key=("t", 2))
    assert ("t", 2) in X._EXACT_TOO_SLOW
    assert up.delta == X.delta_convex(g, n, "upper").delta
    lo = X.delta_continuous(g, n, "lower", key=("t", 2))
    assert lo.delta == X.delta_convex(g, n, "lower").delta
    assert lo.delta <= fast.delta and X.delta_exact(g, n, "lower").delta <= up.delta
