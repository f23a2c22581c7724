"""The big-jump upper bound of the Gaussian randomizer against independent computations.

Oracles (none from the library's evaluators):
* the pointwise inequality behind the bound, on random vectors;
* the tail term E[(G - K)_+] by adaptive quadrature of the two normal densities;
* the exact divergence of the shuffled Gaussian pair at n = 2 by numerical integration (test_gaussian);
* the threshold-count divergence in 40-digit arithmetic (test_gaussian), a lower bound on the truth at any n;
* the analytic Gaussian mechanism's ε (Balle-Wang) by brentq: the central ε is never above it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm

import shuffleamp as sa
from shuffleamp import gaussian as G
from test_gaussian import analytic_gaussian_epsilon, shuffled_divergence, threshold_oracle


def test_pointwise_inequality_of_the_split():
    """(Σ l)_+ <= (Σ min(l, L) + C)_+ + Σ (y_i - C)_+ + Y 1{N >= 2}, y = (l - L)_+, for C >= 0."""
    g = np.random.default_rng(7)
    for _ in range(20000):
        n = int(g.integers(1, 7))
        l = g.standard_cauchy(n) * 10 ** g.uniform(-2, 3)
        L = g.normal() * 10 ** g.uniform(-2, 2)
        C = abs(g.normal()) * 10 ** g.uniform(-2, 3)
        y = np.maximum(l - L, 0.0)
        Y = y.sum()
        rhs = max(np.minimum(l, L).sum() + C, 0.0) + np.maximum(y - C, 0.0).sum() + Y * ((y > 0).sum() >= 2)
        assert max(l.sum(), 0.0) <= rhs * (1 + 1e-12) + 1e-12


@pytest.mark.parametrize("mu", [0.5, 2.0, 5.0])
@pytest.mark.parametrize("logK", [0.5, 3.0, 12.0])
def test_tail_term_is_the_local_profile(mu, logK):
    """E[(G - K)_+] on the blanket's left side = ∫ (φ(y) - K φ(y - μ))_+ dy (quadrature) = δ_loc(log K)."""
    K = math.exp(logK)
    cross = mu / 2 - logK / mu                     # φ(y) >= K φ(y - μ) iff y <= cross
    val, err = quad(lambda y: norm.pdf(y) - K * norm.pdf(y - mu), -np.inf, cross, epsabs=1e-300, epsrel=1e-12)
    assert G.gaussian_delta(mu, logK) == pytest.approx(val, rel=1e-8, abs=1e-300)


@pytest.mark.parametrize("mu,eps", [(2.0, 1.5), (4.0, 4.0), (5.0, 8.0)])
def test_above_the_exact_divergence_at_n2(mu, eps):
    z = G.big_jump_depth(mu, 2, 1e-6)
    got = G.big_jump_delta(mu, 2, eps, z)
    ex = shuffled_divergence(mu, eps, 0.0, mu, [mu], 0.02, 9.0)
    ex2 = shuffled_divergence(mu, eps, 0.0, mu, [mu], 0.01, 9.0)
    assert got >= ex2 - 10 * abs(ex - ex2) - 1e-12


@pytest.mark.parametrize("mu,n,eps", [(3.0, 60, 6.0), (4.0, 200, 9.0), (5.0, 100, 12.0), (2.5, 150, 3.0)])
def test_above_every_threshold_count(mu, n, eps):
    """Each threshold count is a post-processing of a concrete pair: its exact divergence is below the truth."""
    z = G.big_jump_depth(mu, n, 1e-9)
    got = G.big_jump_delta(mu, n, eps, z)
    for s in (-3.0, -2.0, -1.0, 0.0):
        assert got >= threshold_oracle(mu, n, eps, s) * (1 - 1e-9)


@pytest.mark.parametrize("sigma,n,delta", [(0.25, 10 ** 7, 1e-6), (1 / 6.95, 55367026, 1.46e-5),
                                           (0.3, 300000, 1e-9), (0.2, 10 ** 5, 1e-100),
                                           (1 / 7.69, 505884, 2.4e-11)])
def test_epsilon_query_answers_heavy_cuts(sigma, n, delta):
    g = sa.Gaussian(sigma=sigma)
    r = sa.epsilon(g, n, delta)
    assert r.settings["upper_engine"] == "big jump"
    assert 0 <= r.lower <= r.upper < analytic_gaussian_epsilon(g.mu, delta)
    z = G.big_jump_depth(g.mu, n, G.BIG_JUMP_SECOND_SHARE * delta)
    assert G.big_jump_delta(g.mu, n, r.upper, z) <= delta
    d = sa.delta(g, n, r.upper)
    assert d.lower <= delta
    assert d.upper <= delta * (1 + 1e-6)



@pytest.mark.parametrize("mu,n,delta", [(1.39, 84, 1.06e-8), (1.48, 1089, 2.7e-8)])
def test_fft_retry_of_a_loose_cut(mu, n, delta):
    """A cut whose exact evaluation is loose is retried by the certified FFT engine inside [lower ε, loose upper ε]:
    at the upper ε every threshold count (40-digit binomial sums, below the truth) is within δ, the lower ε is
    below the local mechanism's, and the δ query at the upper ε is within δ."""
    g = sa.Gaussian(sigma=1.0 / mu)
    r = sa.epsilon(g, n, delta)
    ladder = r.settings["grid"]["ladder"]
    assert [step["evaluator"] for step in ladder][-1] == "fft"
    assert min(step["upper"] for step in ladder) == r.upper < ladder[0]["upper"]
    assert 0 < r.lower <= r.upper < analytic_gaussian_epsilon(mu, delta)
    if n <= 100:
        for s in (-2.0, -1.0, 0.0):
            assert threshold_oracle(mu, n, r.upper, s) <= delta
    assert sa.delta(g, n, r.upper).upper <= delta * (1 + 1e-6)
