"""The Gaussian randomizer's single-round query: the quantised lower-bound dataset and the truncation cuts.

Oracles (independent of the library's evaluators):

* the exact divergence of the quantised pair at n = 2 by enumerating the cell pairs (scipy normal cdf for the
  cell probabilities, plain sums over the multiset of two cells);
* the threshold-count divergence in 40-digit arithmetic (``test_gaussian.threshold_oracle``): the quantised
  dataset is a finer post-processing, so its divergence is at least each threshold's;
* the divergence of the shuffled Gaussian pair at n = 2 by numerical integration
  (``test_gaussian.shuffled_divergence``): above every lower bound.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

import shuffleamp as sa
from shuffleamp import exact as X
from shuffleamp import gaussian as G
from test_gaussian import shuffled_divergence, threshold_oracle


def _cell_probs(mu, step):
    k = int(round(G.LOWER_CELLS_HALF_WIDTH / step))
    t = mu / 2 + step * np.arange(-k, k + 1)
    edges = np.concatenate([[-np.inf], t, [np.inf]])
    return np.diff(norm.cdf(edges)), np.diff(norm.cdf(edges - mu))


def _pair_divergence_n2(p0, p1, eps):
    """max over both orderings of sum_{multisets {i, j}} (P_D0 - e^eps P_D1)_+, D0 = (0, Δ), D1 = (Δ, Δ)."""
    e = math.exp(eps)
    A = np.outer(p0, p1)
    A = A + A.T                      # unordered pair {i, j}: P(one report in i, the other in j) for i != j
    B = 2 * np.outer(p1, p1)
    iu = np.triu_indices(len(p0), 1)
    d0 = np.concatenate([np.diag(np.outer(p0, p1)), A[iu]])
    d1 = np.concatenate([np.diag(np.outer(p1, p1)), B[iu]])
    return max(float(np.maximum(d0 - e * d1, 0).sum()), float(np.maximum(d1 - e * d0, 0).sum()))


@pytest.mark.parametrize("mu,eps", [(0.3, 0.1), (0.8, 0.4), (0.8, 1.2)])
def test_cells_lower_n2_against_enumeration(mu, eps):
    dec = G.cells_lower(mu)
    p0, p1 = _cell_probs(mu, G.LOWER_CELLS_STEP)
    exact = _pair_divergence_n2(p0, p1, eps)
    got = max(X.delta_exact_family(d, 2, eps, "lower").delta for d in (dec, dec.swapped()))
    assert got <= exact * (1 + 1e-9) + 1e-15
    assert got >= exact * (1 - 1e-6)
    # the continuous pair (numerical integration over the outputs) is above every lower bound
    full = shuffled_divergence(mu, eps, 0.0, mu, [mu], 0.02)
    assert got <= full + 1e-6


@pytest.mark.parametrize("mu,n,eps", [(0.5, 50, 0.3), (0.9, 2000, 0.05)])
def test_cells_lower_dominates_every_threshold(mu, n, eps):
    dec = G.cells_lower(mu)
    got = max(X.delta_exact_family(d, n, eps, "upper").delta for d in (dec, dec.swapped()))
    for s in G.THRESHOLDS:
        assert got >= threshold_oracle(mu, n, eps, s) * (1 - 1e-6)


@pytest.mark.parametrize("mu", [0.2, 1.0, 4.0])
@pytest.mark.parametrize("charge", [1e-4, 1e-9, 1e-13])
def test_depth_for_charges_at_most_the_request(mu, charge):
    z = G._depth_for(mu, charge)
    assert abs(z / G.DEPTH_STEP - round(z / G.DEPTH_STEP)) < 1e-9
    assert G._tau(mu, z) <= charge
    assert G._tau(mu, z - G.DEPTH_STEP) > charge or z - G.DEPTH_STEP < 0.5


@pytest.mark.parametrize("sigma,n,delta", [(2.0, 10 ** 6, 1e-8), (0.5, 30, 1e-6), (1.0, 300, 1e-10)])
def test_epsilon_query_brackets_and_matches_delta_query(sigma, n, delta):
    g = sa.Gaussian(sigma=sigma)
    r = sa.epsilon(g, n, delta)
    assert 0 <= r.lower <= r.upper
    d = sa.delta(g, n, r.upper)
    assert d.upper <= delta * (1 + 1e-6)
    assert d.lower <= delta


def test_costly_cut_refused_up_front_naming_sigma():
    # Δ/σ = 8 at δ = 1e-250: the big-jump bound certifies nothing below the local mechanism and the ladder's cut
    # (log-ratios up to ~280 nats) is refused
    from shuffleamp.errors import ResourceLimitError
    with pytest.raises(ResourceLimitError) as info:
        sa.epsilon(sa.Gaussian(sigma=1 / 8), 10 ** 6, 1e-250)
    assert info.value.parameter == "sigma"
    assert "sigma" in str(info.value)
