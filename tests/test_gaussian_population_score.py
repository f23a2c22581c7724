"""Gaussian populations: the multi-level score lower bound against an independent exact computation.

Oracle (here): with the level probabilities of the score (one pmf per user, from the library's level map), the law
of the shuffled score is the convolution of the users' pmfs; it is summed exactly in mpmath (60 digits), and the
divergence of the concrete pair is :math:`\\sum_t (P^0(t) - e^\\varepsilon P^1(t))_+`.  The threshold-count value of
the two-σ regression case is an independent scipy binomial sum.
"""

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.stats import binom, norm

import shuffleamp as sa
from shuffleamp import personalized as P
from shuffleamp.gaussian import population_score_levels

G = sa.Gaussian


def _mp_conv(a, b):
    out = [mp.mpf(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x == 0:
            continue
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def _exact_score_delta(pop, g, eps):
    mp.mp.dps = 60
    p0, p1, others = population_score_levels(pop, g)
    law = [mp.mpf(1)]
    for q, N in others:
        qm = [mp.mpf(float(x)) for x in q]
        for _ in range(N):
            law = _mp_conv(law, qm)
    A = _mp_conv(law, [mp.mpf(float(x)) for x in p0])
    B = _mp_conv(law, [mp.mpf(float(x)) for x in p1])
    e = mp.exp(eps)
    return float(sum(max(x - e * y, 0) for x, y in zip(A, B)))


@pytest.mark.parametrize("sigmas,counts,eps", [((0.5, 1.0), (4, 4), 0.3), ((0.4, 0.7, 1.2), (3, 3, 2), 0.8)])
def test_score_lower_matches_exact_convolution(sigmas, counts, eps):
    pop = sa.population([(G(sigma=s, sensitivity=1.0), c) for s, c in zip(sigmas, counts)])
    p0, p1, _ = population_score_levels(pop, 0)
    assert abs(p0.sum() - 1) < 1e-12 and abs(p1.sum() - 1) < 1e-12
    exact = _exact_score_delta(pop, 0, eps)
    lo = P._gaussian_score_delta(pop, 0, eps)
    assert lo <= exact * (1 + 1e-12) + 1e-300
    assert lo >= exact * (1 - 1e-6) - 1e-12, (lo, exact)


def _threshold_delta(eps, st, others, t, D=1.0):
    """δ of the count of reports below t, target 0 vs Δ, others at Δ (scipy binomial sums, convolved directly)."""
    law = np.array([1.0])
    for s, N in others:
        law = np.convolve(law, binom.pmf(np.arange(N + 1), N, norm.cdf((t - D) / s)))
    p0, p1 = norm.cdf(t / st), norm.cdf((t - D) / st)
    A = np.concatenate([[0], law]) * p0 + np.concatenate([law, [0]]) * (1 - p0)
    B = np.concatenate([[0], law]) * p1 + np.concatenate([law, [0]]) * (1 - p1)
    return float(np.maximum(A - math.exp(eps) * B, 0).sum())


def test_two_sigma_lower_regression():
    """5000 users at σ = 0.5 and 5000 at σ = 1, δ = 1e-6: the σ = 0.5 target's lower is at least the ε at which an
    independently summed threshold count (t = Δ/2 − σ_t/2) still has δ above 1e-6, and the score raises it above
    that count (0.063 -> 0.0711)."""
    eps_thr = 0.06
    assert _threshold_delta(eps_thr, 0.5, [(0.5, 4999), (1.0, 5000)], 0.25) > 1e-6
    r = sa.epsilon(sa.population([(G(sigma=0.5, sensitivity=1.0), 5000), (G(sigma=1.0, sensitivity=1.0), 5000)]),
                   delta=1e-6)
    g0 = r.groups[0]
    assert eps_thr <= g0.lower <= g0.upper
    assert g0.lower >= 0.068 and "score" in g0.settings["lower"]


def test_accountant_score_pair_matches_exact_convolution():
    """The accountant's score pair (direct convolutions, windowed squaring) against the exact mpmath law: every
    entry within its relative bound (the windows drop at most the charged tail)."""
    from shuffleamp.gaussian import population_score_pair
    pop = sa.population([(G(sigma=0.5, sensitivity=1.0), 6), (G(sigma=1.0, sensitivity=1.0), 5)])
    P0_lo, P0_hi, P1_lo, P1_hi, rel, dropped = population_score_pair(pop, 0)
    mp.mp.dps = 60
    p0, p1, others = population_score_levels(pop, 0)
    law = [mp.mpf(1)]
    for q, N in others:
        for _ in range(N):
            law = _mp_conv(law, [mp.mpf(float(x)) for x in q])
    for lo, hi, p in ((P0_lo, P0_hi, p0), (P1_lo, P1_hi, p1)):
        exact = [float(v) for v in _mp_conv(law, [mp.mpf(float(x)) for x in p])]
        assert len(exact) == lo.size == hi.size
        for a, b, e_ in zip(lo, hi, exact):
            assert a * (1 - rel) <= e_ * (1 + 1e-12) and e_ <= b * (1 + rel) + dropped
            assert a >= e_ * (1 - 1e-6) and b <= e_ * (1 + 1e-6) + 1e-300


def test_totals_one_round_and_ten_rounds():
    """5000 + 5000 users at σ = 0.5 and 1 (δ = 1e-6): one round's total is the single round's bracket, and ten
    rounds keep the per-round ratio (total upper/lower at most the single round's ratio + 2 %)."""
    pop = sa.population([(G(sigma=0.5, sensitivity=1.0), 5000), (G(sigma=1.0, sensitivity=1.0), 5000)])
    single = sa.epsilon(pop, delta=1e-6)
    one = sa.compose_rounds([(pop, None, 1)], delta=1e-6)
    assert one.upper == pytest.approx(single.upper, rel=1e-9)
    assert one.lower >= max(g.lower for g in single.groups) * (1 - 1e-9)
    ten = sa.compose_rounds([(pop, None, 10)], delta=1e-6)
    assert ten.lower <= ten.upper
    assert ten.upper / ten.lower <= (single.upper / max(g.lower for g in single.groups)) * 1.02
