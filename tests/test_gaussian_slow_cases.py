"""The slowest ε(δ) queries of the Gaussian randomizer's latency sample (``bench/bench_continuous.py``, seeds
20261127 and 1: Δ/σ = 6.3 - 7.7, n = 4e5 - 7e5) against independent values.

Oracles (no library evaluator):
* the far-tail threshold counts of ``shuffleamp.gaussian.THRESHOLDS`` (s = −6, −5, −4: the count of reports at or
  below Δ/2 + sσ, dataset 0 | Δ; others Δ, both orderings; the others' reports fall there rarely, so the window of
  counts is short) in 40-digit arithmetic (mpmath binomial terms on the window of counts that
  carries all but 1e-40 of both laws; the rest is added to the divergence as its bound); the largest ε at which
  one of them still exceeds δ (brentq on the oracle) is a lower bound on the true ε, so the certified upper must be
  at or above it, and the certified lower, which searches these counts first and finer quantised pairs after
  them, at or above it up to the threshold search's tolerance (1 %);
* the analytic Gaussian mechanism's ε (Balle, Wang, ICML 2018, Theorem 8, by brentq): the shuffled output is a
  post-processing of the differing user's report, so the true ε, hence the certified lower, is at most it.

The lower searches of these queries skip the datasets whose Chernoff upper bound shows that they cannot change the
result (``_lower_values``); the exactness of that rule (the same values as evaluating every dataset) is checked
directly as well.
"""

from __future__ import annotations

import math

import pytest
from scipy.optimize import brentq
from scipy.stats import norm

import shuffleamp as sa
from shuffleamp import bounds as B
from shuffleamp import gaussian as G
from shuffleamp._registry import Settings

#: (σ, n, δ) of the slowest cases (Δ = 1), CPU 0.19 - 0.31 s each before the Chernoff skip, 0.07 - 0.12 s after.
SLOW = [(0.15068219114464423, 728710, 0.0002940408631611705),
        (0.15774876489787715, 430058, 1.3188807624143167e-05),
        (0.130038171807284, 505884, 2.4251102772880823e-11)]


#: The thresholds of the oracle (a subset of THRESHOLDS: any subset gives a lower bound on the true ε).
FAR_THRESHOLDS = (-6.0, -5.0, -4.0)


def count_divergence(mu: float, n: int, eps: float, s: float) -> float:
    """max over both orderings of Σ_c (P_a(c) − e^ε P_b(c))_+ for the count c of reports at or below t = μ/2 + s
    (σ = 1): P_0 = Bernoulli(q0) + Bin(n − 1, q1), P_1 = Bin(n, q1), q_x = Φ(t − x); the counts outside the window
    add their mass (at most 1e-40) as a bound."""
    import mpmath as mp
    with mp.workdps(40):
        t = mp.mpf(mu) / 2 + mp.mpf(s)
        q0, q1 = mp.ncdf(t), mp.ncdf(t - mu)
        m = float(n * q1)
        cmax = min(n, int(m + 40 * math.sqrt(m + 1) + 60))
        e = mp.e ** mp.mpf(eps)

        def binom(k, c):
            return mp.binomial(k, c) * q1 ** c * (1 - q1) ** (k - c) if 0 <= c <= k else mp.mpf(0)
        p1 = [binom(n, c) for c in range(cmax + 1)]
        p0 = [q0 * binom(n - 1, c - 1) + (1 - q0) * binom(n - 1, c) for c in range(cmax + 1)]
        tail = max(1 - mp.fsum(p0), 1 - mp.fsum(p1), mp.mpf(0))
        a = mp.fsum(max(x - e * y, 0) for x, y in zip(p0, p1))
        b = mp.fsum(max(y - e * x, 0) for x, y in zip(p0, p1))
        return float(max(a, b) + tail)


def threshold_epsilon(mu: float, n: int, delta: float) -> float:
    """The largest ε at which a far-tail threshold count's divergence exceeds δ (0 if none does at ε = 0)."""
    best = 0.0
    for s in FAR_THRESHOLDS:
        f = lambda e: count_divergence(mu, n, e, s) - delta        # noqa: E731 - decreasing in ε
        if f(0.0) <= 0.0:
            continue
        hi = 1.0
        while f(hi) > 0.0:
            hi *= 2.0
        best = max(best, brentq(f, hi / 2 if hi > 1.0 else 0.0, hi, xtol=1e-9, rtol=1e-12))
    return best


def local_epsilon(mu: float, delta: float) -> float:
    def f(e):
        return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta
    return brentq(f, 0.0, 200.0, xtol=1e-12, rtol=1e-14)


@pytest.mark.parametrize("sigma,n,delta", [SLOW[0], pytest.param(*SLOW[1], marks=pytest.mark.slow)])
def test_slow_case_bracket_against_threshold_counts(sigma, n, delta):
    mu = 1.0 / sigma
    r = sa.epsilon(sa.Gaussian(sigma=sigma), n, delta)
    oracle = threshold_epsilon(mu, n, delta)
    assert oracle > 0.0
    assert oracle <= r.upper, (oracle, r.upper)                          # the upper is above a true lower value
    assert oracle * (1 - 1e-2) <= r.lower <= r.upper, (oracle, r.lower)  # the lower reaches the counts' root
    assert r.lower <= local_epsilon(mu, delta)                           # ... and stays below a true upper value


@pytest.mark.slow
def test_slowest_case_bracket_against_threshold_counts():
    sigma, n, delta = SLOW[2]
    mu = 1.0 / sigma
    r = sa.epsilon(sa.Gaussian(sigma=sigma), n, delta)
    oracle = threshold_epsilon(mu, n, delta)
    assert oracle * (1 - 1e-2) <= r.lower <= r.upper and oracle <= r.upper, (oracle, r.lower, r.upper)
    assert r.lower <= local_epsilon(mu, delta)


@pytest.mark.parametrize("sigma,n,delta", SLOW[:2])
def test_lower_values_skip_changes_nothing(sigma, n, delta):
    """The skip rule's values are those of evaluating every dataset, wherever a dataset is evaluated, and a skipped
    dataset's value is below the kept ones (ranking) or negligible (root searches)."""
    mu = 1.0 / sigma
    g = sa.Gaussian(sigma=sigma)
    ctx = Settings(rtol=1e-3, rtol_lower=1e-4, max_grid=1 << 25, evaluator="exact", max_seconds=60.0,
                   max_memory_gb=4.0)
    fams = list(B._with_swaps(g.lower_decompositions())) + list(G._lower_families(g, B, n, 25.0))
    skipped = 0
    for eps in (20.0, 25.0, 27.0, 30.0):
        full = [B.max_delta([f], n, eps, B.LOWER_MODE, ctx.rtol_lower, ctx.max_grid, ctx.evaluator)[0]
                for f in fams]
        for keep in (1, 2):
            memo = {}
            G._lower_values(fams, n, eps, ctx, B, keep, None, memo)          # learns which datasets are costly
            vals, _ = G._lower_values(fams, n, eps, ctx, B, keep, None, memo)
            done = [v for v in vals if v is not None]
            assert all(v == full[i] for i, v in enumerate(vals) if v is not None)
            kth = sorted(done, reverse=True)[keep - 1] if len(done) >= keep else 0.0
            assert all(full[i] < kth or full[i] == 0.0 for i, v in enumerate(vals) if v is None)
            skipped += sum(v is None for v in vals)
        memo = {}
        G._lower_max(fams, n, eps, ctx, B, delta, memo)
        best, _ = G._lower_max(fams, n, eps, ctx, B, delta, memo)
        assert best == max(full) or (best <= 1e-300 and max(full) <= 1e-300)
    assert skipped > 0                     # the rule is exercised here (the cases it was made for)
