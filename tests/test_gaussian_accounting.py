"""The accountant's Gaussian round (accounting module, argument J) against independent computations.

Oracles (none from the accountant's own profile):
* the single-round certified bracket of :func:`shuffleamp.epsilon` (the ladder of truncation depths and the
  quantised concrete pairs: a different code path, whose lower bound is certified);
* the exact divergence of the shuffled Gaussian pair for n = 2 by numerical integration of the permutation-mixture
  output densities (``test_gaussian.shuffled_divergence``, two step sizes);
* the local Gaussian mechanism's divergence (Balle, Wang, ICML 2018, Theorem 8) from scipy's normal CDF;
* the blanket pair's χ²_up (closed form) for the exported PLD's mean loss;
* exact R-fold convolutions of random PMFs for the lower bound's tail cut (argument K).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

import shuffleamp as sa
from shuffleamp import accounting as A
from shuffleamp.errors import ResourceLimitError
from test_gaussian import shuffled_divergence


#: compose_rounds' time budget in these tests: generous (they test values, not the budget; a loaded
#: machine's wall clock can be several times the CPU time)
TOTAL_SECONDS = 300.0


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
    tot = sa.compose_rounds((g, n, 1), delta=1e-6, lower=False, max_seconds=TOTAL_SECONDS)
    assert one.lower <= tot.upper <= one.upper          # one round: the single round's certified upper is an answer


def test_one_round_total_reproduces_the_single_round_bracket():
    """One round of one Gaussian round type (argument J (c)): the total's bracket is at least as tight as the
    single round's, and still contains the single round's certified bracket's overlap."""
    g = sa.Gaussian(sigma=1.0, sensitivity=1.0)
    one = sa.epsilon(g, 10 ** 5, 1e-6)
    tot = sa.compose_rounds((g, 10 ** 5, 1), delta=1e-6, max_seconds=TOTAL_SECONDS)
    assert one.lower <= tot.lower <= tot.upper <= one.upper


def test_pld_with_the_bulk_grid_above_the_certified_lower_profile():
    """Δ/σ = 2, n = 1e5: the exported PLD (a quarter of its points over the bulk of the blanket pair's loss, the rest
    geometric, argument J (a)) has δ(ε) >= the single round's certified lower δ (<= the truth) at every ε tried,
    and its mean loss is the blanket pair's χ²_up / 2n to 2 % (the KL that R rounds multiply)."""
    g = sa.Gaussian(sigma=0.5, sensitivity=1.0)
    n = 10 ** 5
    pld = sa.to_pld(g, n)
    for e in (0.02, 0.1, 0.3, 0.47, 1.0):
        assert pld.get_delta_for_epsilon(e) >= sa.delta(g, n, epsilon=e).lower
    p = pld._pmf_remove.to_dense_pmf()
    probs = np.asarray(p._probs)
    kl = float(np.sum(probs * (np.arange(probs.size) + p._lower_loss) * p._discretization))
    mu = 2.0
    chi2_up = 2 * (math.exp(mu * mu) * norm.cdf(1.5 * mu) - 2 * norm.cdf(mu / 2) + norm.cdf(-mu / 2))
    assert abs(kl / (chi2_up / (2 * n)) - 1.0) < 0.02


def _exact_composed_delta(pmf: dict, R: int, eps: float) -> float:
    """Exact δ(ε) of the R-fold composition of a PMF {integer loss: mass} (losses in units of 1), by convolution."""
    ks = sorted(pmf)
    k0 = ks[0]
    v = np.zeros(ks[-1] - k0 + 1)
    for k in ks:
        v[k - k0] = pmf[k]
    out = np.array([1.0])
    for _ in range(R):
        out = np.convolve(out, v)
    loss = np.arange(out.size) + R * k0
    return float(np.sum(out * np.maximum(-np.expm1(eps - loss), 0.0)))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(1e-9, 1.0), min_size=3, max_size=12), st.integers(-6, 3), st.integers(1, 4),
       st.floats(1e-8, 0.2))
def test_trim_tails_lowers_every_composed_delta_by_at_most_2Rw(masses, k0, R, w):
    """Argument K (iii) against exact convolutions: cutting the tails of an optimistic PMF at mass w lowers the
    R-fold composition's δ(ε) at every ε, by at most 2 R w."""
    m = np.asarray(masses) / sum(masses)
    pmf = {k0 + i: float(x) for i, x in enumerate(m)}
    cut = A._trim_tails(pmf, w)
    assert sum(cut.values()) <= sum(pmf.values()) * (1 + 1e-12)
    for e in (-1.0, 0.0, 0.5, 2.0, 5.0):
        full, trimmed = _exact_composed_delta(pmf, R, e), _exact_composed_delta(cut, R, e)
        assert trimmed <= full + 1e-12
        assert full - trimmed <= 2 * R * w + 1e-12


def test_totals_monotone_in_rounds():
    g = sa.Gaussian(sigma=1.0, sensitivity=1.0)
    prev = 0.0
    for R in (1, 3, 10):
        tot = sa.compose_rounds((g, 10 ** 5, R), delta=1e-6, max_seconds=TOTAL_SECONDS)
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


def test_refused_up_front_naming_max_seconds():
    """Δ/σ = 4: the rungs' truncated laws span log-ratios up to about 40; refused before any evaluation, naming
    ``max_seconds`` and, in the message, ``sigma``."""
    with pytest.raises(ResourceLimitError) as e:
        sa.compose_rounds((sa.Gaussian(sigma=0.25, sensitivity=1.0), 1000, 1), delta=1e-6)
    assert e.value.parameter == "max_seconds" and "sigma" in str(e.value)
