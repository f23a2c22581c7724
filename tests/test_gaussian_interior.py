"""Gaussian randomizer: interior input pairs against the extreme pair (the lemma and the stop-loss
inequalities proved in the module docstring of shuffleamp.gaussian, "Every pair of inputs", checked by an
exact oracle).

For the blanket m = min(φ(y), φ(y − μ)) (units of σ, μ = Δ/σ) and inputs a, b in [0, μ], the GPARV of the pair
(a, b) is G = (φ(y − a) − c φ(y − b))/m(y) with mass m, plus an atom 0 of mass 1 − γ common to every pair.  Its
stop-loss transform, less the common atom's part, is

    F_ab(c, t) = ∫ (φ(y − a) − c φ(y − b) − t m(y))_+ dy,

and convex order G_ab <=_cx G_0μ (equal means 1 − c) holds iff F_ab(c, t) <= F_0μ(c, t) for every t.  The
oracle integrates exactly: the sign changes of the integrand are located on a fine grid and refined by
bisection, and each positive piece is a difference of normal CDFs (scipy.special.ndtr), since m is φ(y − μ)
left of μ/2 and φ(y) right of it.
"""
import numpy as np
import pytest
from scipy.special import ndtr

from shuffleamp.gaussian import MU_MAX


def _pieces_integral(lo, hi, a, b, c, t, mu):
    """Exact ∫_lo^hi (φ(y−a) − c φ(y−b) − t m(y)) dy for lo < hi on one side of μ/2."""
    mid = mu / 2
    shift = mu if hi <= mid else 0.0
    return ((ndtr(hi - a) - ndtr(lo - a)) - c * (ndtr(hi - b) - ndtr(lo - b))
            - t * (ndtr(hi - shift) - ndtr(lo - shift)))


def _f(y, a, b, c, t, mu):
    phi = lambda z: np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)  # noqa: E731
    return phi(y - a) - c * phi(y - b) - t * np.minimum(phi(y), phi(y - mu))


def stop_loss(a, b, c, t, mu, h=0.01, span=40.0):
    """F_ab(c, t), the positive part integrated piece by piece (exact CDF differences between the roots)."""
    mid = mu / 2
    y = np.concatenate([np.arange(-span, mid, h), [mid], np.arange(mid + h, mu + span, h)])
    s = _f(y, a, b, c, t, mu)
    edges = [-np.inf]
    for i in np.nonzero(np.sign(s[:-1]) != np.sign(s[1:]))[0]:
        lo, hi = y[i], y[i + 1]
        for _ in range(60):                                    # bisection to the root
            m = 0.5 * (lo + hi)
            if np.sign(_f(m, a, b, c, t, mu)) == np.sign(s[i]):
                lo = m
            else:
                hi = m
        edges.append(0.5 * (lo + hi))
    edges.append(np.inf)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        probe = 0.5 * (max(lo, -span) + min(hi, mu + span)) if np.isfinite(lo) or np.isfinite(hi) else 0.0
        if _f(probe, a, b, c, t, mu) <= 0:
            continue
        cuts = [lo] + ([mid] if lo < mid < hi else []) + [hi]
        for u, v in zip(cuts[:-1], cuts[1:]):
            total += _pieces_integral(u, v, a, b, c, t, mu)
    return total


def _check(mu, cs, ts, k):
    grid = np.linspace(0.0, mu, k)
    worst = -np.inf
    for c in cs:
        for t in list(ts) + [1 - c - 1e-3, 1 - c + 1e-3]:
            ref = stop_loss(0.0, mu, c, t, mu)
            for a in grid:
                for b in grid:
                    v = stop_loss(a, b, c, t, mu)
                    worst = max(worst, v - ref)
                    assert v <= ref + 1e-12, (mu, c, t, a, b, v, ref)
    return worst


def test_oracle_matches_the_gaussian_hockey_stick():
    """t = 0, a = 0, b = μ: F is the hockey-stick divergence of N(0,1) and N(μ,1) (Balle–Wang)."""
    from shuffleamp.gaussian import gaussian_delta
    for mu in (0.5, 2.0):
        for c in (1.0, 3.0):
            assert stop_loss(0.0, mu, c, 0.0, mu) == pytest.approx(gaussian_delta(mu, np.log(c)), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("mu", [0.3, 1.0, 3.0, MU_MAX])
def test_lemma_blanket_stop_loss_largest_at_the_end_points(mu):
    """H_x(K) = ∫(φ(y − x) − K m)_+ <= H_0(K) = H_μ(K) for x in [0, μ], K >= 1 (c = 0 in the oracle)."""
    for K in (1.0, 1.01, 1.3, 2.0, 5.0, 50.0):
        ref = stop_loss(0.0, mu, 0.0, K, mu)
        assert stop_loss(mu, 0.0, 0.0, K, mu) == pytest.approx(ref, rel=1e-9, abs=1e-14)
        for x in np.linspace(0.0, mu, 9):
            assert stop_loss(x, mu, 0.0, K, mu) <= ref + 1e-13


@pytest.mark.parametrize("mu", [0.5, 2.0])
def test_interior_pairs_dominated_fast(mu):
    _check(mu, (1.0, 2.0, 10.0), (-5.0, -0.5, 0.0, 0.5, 5.0), 4)


@pytest.mark.slow
@pytest.mark.parametrize("mu", [0.25, 0.5, 1.0, 2.0, 4.0, MU_MAX])
def test_interior_pairs_dominated_grid(mu):
    _check(mu, (1.0, 1.1, 1.5, 3.0, 10.0, 100.0), (-20.0, -3.0, -1.0, -0.3, 0.0, 0.3, 1.0, 3.0, 20.0), 7)
