"""The personalized (heterogeneous blanket) bound of a population on its integral paths, against an independent
oracle of the very mixture it certifies.

For a target of group g the bound is :math:`\\sum_m P(M'=m)\\,E[(\\sum_{i\\le m+1} L_i)_+]/(m+1)` (Su-Cheng-Wang,
Theorem 12, averaged over the Poisson-binomial blanket count M' of the other users).  Where the window of M' is
wide the library integrates it as one Bromwich integral with an outer function (the Gauss-Laguerre rule or the
Poisson-binomial window); these tests compare that value on both sides with
``exact_oracles.blanket_mixture_bounds`` (binomial sums, no Bromwich integral), itself checked here against an
mpmath enumeration of every blanket count and every count vector on small populations:

* sound: the library's upper is at least the oracle's lower end;
* tight: it is at most the oracle's upper end times (1 + 1e-5).

A fast subset runs in CI (one case per path and population kind); the sweep over n = 300 ... 1e5 and the
two- and three-group mixes (k-RR and binary randomized response) is marked slow.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

import shuffleamp as sa
from shuffleamp import personalized as P
from shuffleamp.mechanisms import KRR

import exact_oracles as E

#: Relative round-off allowed on the oracle's own binomial sums (against the mpmath enumeration).
ROUND_REL = E.POPULATION_ROUND_REL


def _mp_mixture(values, probs, gammas, counts, dps=40):
    """sum_m P(M'=m) E[(sum_{i<=m+1} L_i)_+] / (m+1) by full enumeration in mpmath (at most three atoms)."""
    with mp.workdps(dps):
        v = [mp.mpf(x) for x in values]
        q = [mp.mpf(x) for x in probs]
        while len(v) < 3:
            v.append(mp.mpf(0))
            q.append(mp.mpf(0))
        pm = [mp.mpf(1)]
        for gm, N in zip(gammas, counts):
            gm = mp.mpf(gm)
            b = [mp.binomial(N, i) * gm ** i * (1 - gm) ** (N - i) for i in range(N + 1)]
            out = [mp.mpf(0)] * (len(pm) + len(b) - 1)
            for i, x in enumerate(pm):
                for j2, y in enumerate(b):
                    out[i + j2] += x * y
            pm = out
        total = mp.mpf(0)
        for m, pmm in enumerate(pm):
            j = m + 1
            s = mp.mpf(0)
            for a in range(j + 1):
                for b2 in range(j - a + 1):
                    c = j - a - b2
                    x = a * v[0] + b2 * v[1] + c * v[2]
                    if x > 0:
                        s += mp.factorial(j) / (mp.factorial(a) * mp.factorial(b2) * mp.factorial(c)) \
                            * q[0] ** a * q[1] ** b2 * q[2] ** c * x
            total += pmm * s / j
        return float(total)


def _krr_law(eps0, k, eps):
    Et, e = math.exp(eps0), math.exp(eps)
    A, B, C = k * (Et - e) / (Et + k - 1), k * (1 - e * Et) / (Et + k - 1), k * (1 - e) / (Et + k - 1)
    return [A, B, C], [1 / k, 1 / k, (k - 2) / k]


@pytest.mark.parametrize("values, probs, gammas, counts", [
    (*_krr_law(1.0, 4, 0.4), [4 / (math.exp(x) + 3) for x in (0.5, 1.0, 2.0)], [9, 8, 7]),
    (*_krr_law(2.0, 2, 0.5), [2 / (math.exp(x) + 1) for x in (0.5, 2.0)], [14, 11]),
    ([1.7, -0.4, -2.5], [0.15, 0.6, 0.25], [0.3, 0.8], [10, 12]),
], ids=["krr3groups", "binary", "three-atom"])
def test_oracle_against_mpmath_enumeration(values, probs, gammas, counts):
    """The oracle's (lo, hi) brackets the mixture enumerated in mpmath (every blanket count, every count
    vector), and both ends agree with it to 1e-12 relative."""
    lo, hi = E.blanket_mixture_bounds(values, probs, gammas, counts)
    ref = _mp_mixture(values, probs, gammas, counts)
    assert ref > 0
    assert lo <= ref * (1 + ROUND_REL) and hi >= ref * (1 - ROUND_REL), (lo, ref, hi)
    assert abs(hi - ref) <= 1e-12 * ref, (lo, ref, hi)


def _population(eps0s, k, fractions, n):
    counts = [int(f * n) for f in fractions]
    counts[-1] = n - sum(counts[:-1])
    return sa.population([(KRR(eps0=e, k=k), c) for e, c in zip(eps0s, counts)]), counts


def _check_personalized(eps0s, k, fractions, n, eps, how=None, groups=None, rtol=1e-7):
    """Both sides for the targets of ``groups`` (default: every group).  The tight side is checked where the
    oracle's own bracket is tight (a group whose δ is far below any use, 1e-60 or its bracket wider than
    1e-9 relative, gets the sound side only); the groups of ``groups`` given explicitly must be such groups."""
    pop, counts = _population(eps0s, k, fractions, n)
    oracle = E.krr_personalized_bounds(eps0s, counts, k, eps)
    for g in (range(len(eps0s)) if groups is None else groups):
        lo, hi = oracle[g]
        tight = lo > 1e-60 and hi <= lo * (1 + 1e-9)
        assert tight or groups is None, (g, lo, hi)               # the oracle itself is tight here
        up, info = P._delta_target(pop, g, eps, rtol)
        if how is not None:
            assert info["how"] == how, info                      # the path this case is meant to exercise
        E.assert_within_bracket(up, lo, hi, tight=tight, where=(n, g))


TWO_KRR = ((0.5, 2.0), 10, (0.6, 0.4))
THREE_KRR = ((0.5, 1.0, 2.0), 5, (0.5, 0.3, 0.2))
TWO_BINARY = ((0.5, 2.0), 2, (0.6, 0.4))
THREE_BINARY = ((0.3, 1.0, 3.0), 2, (0.2, 0.5, 0.3))


def _eps(n):
    return 0.3 * math.sqrt(1000.0 / n)


@pytest.mark.parametrize("mix, n", [(TWO_KRR, 1000), (THREE_KRR, 3000), (TWO_BINARY, 10_000)],
                         ids=["krr2-1000", "krr3-3000", "binary2-1e4"])
def test_personalized_bound_on_the_rule_path(mix, n):
    """Fast subset: the Gauss-Laguerre rule path against the oracle, both sides, for a target of the group of
    largest ε0 (the worst group; the sweep below checks every group)."""
    _check_personalized(*mix, n, _eps(n), how="rule", groups=[len(mix[0]) - 1])


def test_personalized_bound_on_the_window_path(monkeypatch):
    """The Poisson-binomial window path (the rule switched off) integrates the same outer-function law: against
    the oracle, both sides."""
    monkeypatch.setattr(P._Mixture, "_rule_nodes", lambda self: None)
    monkeypatch.setattr(P, "DIRECT_MAX", 0)
    _check_personalized(*TWO_KRR, 2000, _eps(2000), how="pmf", groups=[1])


def test_generic_law_through_the_mixture():
    """``_delta_law`` (the evaluator the Gaussian populations also call, with their spread law) on a
    three-atom law that is no k-RR law, over unequal blanket masses: against the oracle, both sides."""
    vals, mass = np.array([1.7, -0.2, -0.9]), np.array([0.15, 0.6, 0.25])
    gam, N = np.array([0.3, 0.8]), np.array([1500.0, 900.0])
    up, info = P._delta_law(vals, mass, gam, N, 1e-7)
    assert info["how"] == "rule", info
    E.assert_blanket_mixture(up, vals, mass, gam, N, lo_min=1e-7)


@pytest.mark.slow
@pytest.mark.parametrize("n", [300, 1000, 3000, 10_000, 30_000, 100_000])
@pytest.mark.parametrize("mix", [TWO_KRR, THREE_KRR, TWO_BINARY, THREE_BINARY],
                         ids=["krr2", "krr3", "binary2", "binary3"])
def test_personalized_bound_sweep(mix, n):
    """Sweep over n and group mixes (two and three groups, k-RR and binary RR), both sides."""
    _check_personalized(*mix, n, _eps(n), rtol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("n, delta", [(300, 1e-6), (1000, 1e-6), (3000, 1e-6), (10_000, 1e-8), (100_000, 1e-8)])
def test_public_upper_sweep(n, delta):
    """``delta(pop).upper`` at the certified ε of δ (two k-RR groups) against the oracle of the certified
    bound (minimum of the personalized bound and everyone-at-the-largest-ε0), both sides."""
    pop, counts = _population(*TWO_KRR, n)
    r = sa.epsilon(pop, delta=delta)
    d = sa.delta(pop, epsilon=r.upper)
    at = E.krr_population_bounds(TWO_KRR[0], counts, TWO_KRR[1], r.upper)
    lo, hi = max(x for x, _ in at), max(x for _, x in at)
    E.assert_within_bracket(d.upper, lo, hi)


def test_a_law_with_its_own_integrand_must_give_its_own_panel_nodes():
    """``exact._bromwich`` integrates ``panel_nodes`` only: a subclass of the atomic law that overrides ``nodes``
    (its own integrand) without ``panel_nodes`` is refused when the class is created."""
    from shuffleamp import exact

    with pytest.raises(TypeError, match="panel_nodes"):
        class _Law(exact._AtomLaw):          # noqa: F841 - the class statement itself must fail
            def nodes(self, t):
                return None
