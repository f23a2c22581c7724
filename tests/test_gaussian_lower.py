"""The Gaussian randomizer's lower bound (quantised concrete pairs) against independent computations.

Oracles (here, none from the library's evaluators):
* the exact divergence of a quantised pair (0 | Δ; others Δ) by enumeration of the shuffled cell histograms
  (multinomial pmf from log-gamma, both orderings);
* the exact divergence of the shuffled Gaussian pair for n = 2, 3 by numerical integration of the
  permutation-mixture output densities (``tests/test_gaussian.py``'s oracle), maximised over a grid of the
  other users' inputs.
"""

import itertools
import math

import numpy as np
import pytest
from scipy.special import gammaln
from scipy.stats import norm

import shuffleamp as sa
from shuffleamp import gaussian as G
from shuffleamp.bounds import LOWER_MODE, max_delta
from test_gaussian import shuffled_divergence


#: compose_rounds' time budget in these tests: generous (they test values, not the budget; a loaded
#: machine's wall clock can be several times the CPU time)
TOTAL_SECONDS = 300.0


def cell_probs(mu, cuts):
    """Cell probabilities of N(0,1) and N(mu,1) for cuts at mu/2 + s (by scipy.stats.norm.cdf differences)."""
    t = np.concatenate([[-np.inf], mu / 2 + np.asarray(cuts, dtype=float), [np.inf]])
    return np.diff(norm.cdf(t)), np.diff(norm.cdf(t - mu))


def compositions(n, k):
    """All count vectors of n users in k cells."""
    for bars in itertools.combinations(range(n + k - 1), k - 1):
        prev, out = -1, []
        for b in bars:
            out.append(b - prev - 1)
            prev = b
        out.append(n + k - 2 - prev)
        yield out


def quantised_oracle(mu, cuts, n, eps):
    """max over both orderings of sum_h (P0(h) - e^eps P1(h))_+, h the shuffled cell histogram of the dataset
    (x | x'; others Δ), x, x' in {0, Δ}."""
    p0, p1 = cell_probs(mu, cuts)
    k = p0.size
    e = math.exp(eps)
    lp1 = np.log(np.maximum(p1, 1e-320))
    best = 0.0
    for first, second in ((p0, p1), (p1, p0)):
        tot = 0.0
        for h in compositions(n, k):
            h = np.array(h)
            # P(h) = sum_j first_j * Mult(h - e_j; n - 1, p1)
            pa = pb = 0.0
            for j in np.nonzero(h)[0]:
                g = h.copy()
                g[j] -= 1
                lm = gammaln(n) - gammaln(g + 1).sum() + float(np.dot(g, lp1))
                m = math.exp(lm)
                pa += first[j] * m
                pb += second[j] * m
            tot += max(pa - e * pb, 0.0)
        best = max(best, tot)
    return best


@pytest.mark.parametrize("mu,n,eps", [(0.5, 4, 0.4), (1.0, 6, 1.0), (2.0, 5, 3.0), (1.0, 3, 2.5)])
def test_layouts_against_enumeration(mu, n, eps):
    """Each quantised pair the lower bound may use, evaluated by the library (certified lower, both orderings),
    against the enumerated histogram law."""
    for dec in G.lower_layouts(mu, n, eps):
        if not hasattr(dec, "cuts") or dec.a.size > 10:
            continue
        cuts = dec.cuts
        v = max_delta([dec, dec.swapped()], n, eps, LOWER_MODE)[0]
        o = quantised_oracle(mu, cuts, n, eps)
        assert v <= o * (1 + 1e-9) + 1e-15
        assert v >= o * (1 - 1e-3) - 1e-15


@pytest.mark.parametrize("mu,eps,n", [(2.0, 2.0, 2), (1.0, 1.0, 2), (0.5, 0.3, 2), (2.0, 1.0, 3), (1.0, 0.5, 3)])
def test_lower_close_to_truth_small_n(mu, eps, n):
    """n = 2, 3: the worst case over a grid of the other users' inputs (numerical integration) lies in the bracket,
    and the lower bound is within 5 % of it (the threshold counts alone were 10-50 % below)."""
    h, hw = (0.02, 9.0) if n == 2 else (0.1, 6.5)
    r = sa.delta(sa.Gaussian(sigma=1.0, sensitivity=mu), n, eps)
    truth = max(shuffled_divergence(mu, eps, x0, x1, [c] * (n - 1), h, hw)
                for c in np.linspace(0.0, mu, 5) for x0, x1 in ((0.0, mu), (mu, 0.0)))
    err = 1e-3 * truth + 1e-9                 # the grid's error (step halving changes it by < 1e-4 relative)
    assert r.lower <= truth + err
    assert truth - err <= r.upper
    assert r.lower >= 0.95 * truth


def histogram_pair(mu, cuts, n):
    """(P0, P1) over the shuffled cell histograms of the dataset (0 | Δ; others Δ), enumerated."""
    p0, p1 = cell_probs(mu, cuts)
    lp1 = np.log(np.maximum(p1, 1e-320))
    P0, P1 = [], []
    for h in compositions(n, p0.size):
        h = np.array(h)
        pa = pb = 0.0
        for j in np.nonzero(h)[0]:
            g = h.copy()
            g[j] -= 1
            m = math.exp(gammaln(n) - gammaln(g + 1).sum() + float(np.dot(g, lp1)))
            pa += p0[j] * m
            pb += p1[j] * m
        P0.append(pa)
        P1.append(pb)
    return np.array(P0), np.array(P1)


def composed_delta(P, Q, R, eps):
    """Exact hockey-stick divergence at e^eps of the R-fold product pair (P^R, Q^R): the privacy-loss atoms
    under P combined R times (np.add.outer), infinite losses kept apart."""
    keep = P > 0
    inf_p = float(P[keep & (Q <= 0)].sum())
    fin = keep & (Q > 0)
    loss, mass = np.log(P[fin]) - np.log(Q[fin]), P[fin]
    L, M = loss, mass
    for _ in range(R - 1):
        L = np.add.outer(L, loss).ravel()
        M = np.outer(M, mass).ravel()
        L, inv = np.unique(np.round(L, 12), return_inverse=True)
        M = np.bincount(inv, weights=M)
    fin_mass = float(mass.sum())
    tot_inf = 1.0 - fin_mass ** R                    # some round's loss is infinite
    return float(np.sum(M * np.maximum(-np.expm1(eps - L), 0.0))) + tot_inf * (inf_p > 0)


@pytest.mark.parametrize("mu,n,R", [(1.0, 3, 2), (2.0, 3, 2), (1.0, 2, 3)])
def test_total_lower_below_composed_quantised_pairs(mu, n, R, monkeypatch):
    """The accountant's lower total ε: the exact R-fold composition of its quantised pairs (enumerated, both
    orderings) still has δ >= the target there (so the lower total is below the best pair's total, itself below
    the Gaussian's).  The candidates are limited to at most 16 cells (the enumeration's size)."""
    delta = 1e-3
    g = sa.Gaussian(sigma=1.0 / mu, sensitivity=1.0)
    small = [dec for dec in G.totals_lowers(mu, n, sa.epsilon(g, n, delta).lower) if len(dec.a) <= 16]
    assert len(small) >= 2
    monkeypatch.setattr(G, "totals_lowers", lambda *args: list(small))
    r = sa.compose_rounds((g, n, R), delta=delta, max_seconds=TOTAL_SECONDS)
    assert 0 < r.lower <= r.upper
    assert r.lower_method != "single-round"            # the composed pairs are what is tested here
    best = 0.0
    for dec in small:                                                     # the accountant's candidates
        P, Q = histogram_pair(mu, dec.cuts, n)
        best = max(best, composed_delta(P, Q, R, r.lower), composed_delta(Q, P, R, r.lower))
    assert best >= delta * (1 - 1e-6)
