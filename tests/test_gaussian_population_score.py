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


def test_far_threshold_count_keeps_its_rare_side():
    """A threshold far below Δ/2 (s = −7σ_t): the count of reports above t has probabilities 1 − 1e-12 whose
    complements rounding would lose (the lower was 4x the truth, above the certified upper, at 5000 + 5000 users,
    ε = 0.5); the count below t keeps them.  Against an mpmath sum of the same count laws."""
    from shuffleamp import gaussian as GG
    mp.mp.dps = 50
    pop = sa.population([(G(sigma=0.5, sensitivity=1.0), 150), (G(sigma=1.0, sensitivity=1.0), 150)])
    s, eps = -7.0, 0.5
    P0, P1, rel, absolute, tail = GG._threshold_pair(pop, 1, s)
    t = mp.mpf(0.5) + s * 1.0
    ncdf = lambda x, sig: mp.ncdf(x / sig)
    law = [mp.mpf(1)]
    for sig, N in ((0.5, 150), (1.0, 149)):
        p = ncdf(t - 1, sig)
        law = _mp_conv(law, [mp.binomial(N, k) * p ** k * (1 - p) ** (N - k) for k in range(N + 1)])
    p0, p1 = ncdf(t, 1.0), ncdf(t - 1, 1.0)
    A = [p0 * a + (1 - p0) * b for a, b in zip([0] + law, law + [0])]
    B = [p1 * a + (1 - p1) * b for a, b in zip([0] + law, law + [0])]
    exact = float(sum(max(x - mp.exp(eps) * y, 0) for x, y in zip(A, B)))
    r = rel + 1e-13
    got = float(np.maximum(P0[:len(A)] * (1 - r) - math.exp(eps) * P1[:len(A)] * (1 + r), 0).sum())
    assert got <= exact * (1 + 1e-9)
    assert got >= exact * (1 - 1e-6)
    lo = P._delta_lower(pop, 1, eps, True)[0]
    up = sa.delta(pop, epsilon=eps).groups[1].upper
    assert lo <= up
