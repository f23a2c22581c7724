"""The accountant's Gaussian round (accounting module, argument J) against independent computations.

Oracles (none from the accountant's own profile):
* the single-round certified bracket of :func:`shuffleamp.epsilon` (the ladder of truncation depths and the
  quantised concrete pairs: a different code path, whose lower bound is certified);
* the exact divergence of the shuffled Gaussian pair for n = 2 by numerical integration of the permutation-mixture
  output densities (``test_gaussian.shuffled_divergence``, two step sizes);
* the local Gaussian mechanism's divergence (Balle, Wang, ICML 2018, Theorem 8) from scipy's normal CDF.
"""

import math

import numpy as np
import pytest
from scipy.stats import norm

import shuffleamp as sa
from shuffleamp import accounting as A
from shuffleamp.errors import ResourceLimitError
from test_gaussian import shuffled_divergence


def _local_oracle(mu, eps):
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("sigma,n", [(0.5, 10 ** 3), (0.5, 10 ** 5), (1.0, 10 ** 3), (1.0, 10 ** 5)])
def test_one_round_total_within_the_single_round_bracket(sigma, n):
    """One composed round: at least the single round's certified lower ε, at most its upper ε plus the
    discretisation's slack (connect-the-dots on a grid of step d: a few steps) and 3 % (measured 2.2 % at σ = 0.5,
    n = 1e3: the single round re-evaluates its loose cuts with the certified FFT engine below 2000 users, the
    accountant's profile does not; 0 - 1.6 % elsewhere)."""
    g = sa.Gaussian(sigma=sigma, sensitivity=1.0)
    one = sa.epsilon(g, n, 1e-6)
    tot = sa.compose_rounds((g, n, 1), delta=1e-6, lower=False)
    d = tot.value_discretization_interval
    assert one.lower <= tot.upper
    assert tot.upper <= one.upper * 1.03 + 4 * d


def test_totals_monotone_in_rounds():
    g = sa.Gaussian(sigma=1.0, sensitivity=1.0)
    prev = 0.0
    for R in (1, 3, 10):
        tot = sa.compose_rounds((g, 10 ** 5, R), delta=1e-6)
        assert 0.0 <= tot.lower <= tot.upper
        assert tot.upper >= prev
        prev = tot.upper


@pytest.mark.parametrize("mu", [1.0, 2.0])
def test_profile_and_pld_above_the_n2_integration_oracle(mu):
    """n = 2: the certified profile and the exported PLD's δ are >= the exact shuffled divergence of the extreme
    dataset (0 | μ; other μ), of its reverse and of an interior dataset (other at μ/2)."""
    g = sa.Gaussian(sigma=1.0, sensitivity=mu)
    eps = np.array([0.3, 1.0, 2.0])
    up, lo = sa.privacy_profile(g, 2, eps)
    pld = sa.to_pld(g, 2)
    for i, e in enumerate(eps):
        for x0, x1, others in ((0.0, mu, [mu]), (mu, 0.0, [mu]), (0.0, mu, [mu / 2])):
            ex = shuffled_divergence(mu, e, x0, x1, others, 0.04)
            ex2 = shuffled_divergence(mu, e, x0, x1, others, 0.02)
            err = 10 * abs(ex - ex2) + 1e-12
            assert ex2 - err <= up[i]
            assert ex2 - err <= pld.get_delta_for_epsilon(float(e))
        assert lo[i] <= up[i] <= _local_oracle(mu, e) * (1 + 1e-9) + 1e-15   # never above the local profile


def test_profile_below_one_deep_cut():
    """The minimum over rungs is at most the single deep cut of the stand-in ``Gaussian.at_n`` (τ ≈ 1e-19), and far
    below it where that cut's Bromwich error bound dominates (Δ/σ = 2, n = 1e5)."""
    g = sa.Gaussian(sigma=0.5, sensitivity=1.0)
    n = 10 ** 5
    eps = np.array([0.3, 0.5, 1.0])
    up, lo = sa.privacy_profile(g, n, eps)
    deep = A._certified_profile(A.dedupe(g.at_n(n).upper_decompositions()), n, eps, "upper")
    assert (lo <= up).all() and (up <= deep).all()
    assert up[1] < 1e-2 * deep[1]


def test_refused_up_front_naming_sigma():
    """Δ/σ = 4: the rungs' truncated laws span log-ratios up to about 40; refused before any evaluation."""
    with pytest.raises(ResourceLimitError) as e:
        sa.compose_rounds((sa.Gaussian(sigma=0.25, sensitivity=1.0), 1000, 1), delta=1e-6)
    assert e.value.parameter == "sigma"
