"""Shuffle-index asymptotics (``baselines.shuffle_index*``): closed forms against direct integration and
brute force, the leading-term functional's properties, and agreement with the certified bracket at n = 1e8.

* the Gaussian indices against numerical integration of their defining integrals (blanket density
  ``min(φ(y), φ(y − μ))`` and the best single input on a grid), independent of the closed forms;
* the k-RR indices against brute force over every pair and every third input of the k × k matrix,
  built here from its definition; the band collapses exactly for k >= 3;
* the leading term ``√(χ²/n) ψ(ε√(n/χ²))`` against a Monte Carlo-free check (its ε-inverse) and its
  monotonicity in ε, χ², n and σ;
* at n = 1e8 the asymptotic band lies inside a stated factor of the certified [lower, upper] bracket of
  ``sa.epsilon`` (Gaussian σ = 2, 5; k-RR k = 2, 3, 10).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

import shuffleamp as sa
from shuffleamp import baselines as B
from shuffleamp.errors import OutOfRegimeError, ParameterError
from shuffleamp.mechanisms import KRR, Laplace


def _gaussian_upper_by_quadrature(mu: float) -> float:
    def f(y):
        a, b = norm.pdf(y), norm.pdf(y - mu)
        return (a - b) ** 2 / min(a, b)
    left = integrate.quad(f, mu / 2 - 30.0, mu / 2, epsabs=0.0, epsrel=1e-11, limit=200)[0]
    right = integrate.quad(f, mu / 2, mu / 2 + 30.0, epsabs=0.0, epsrel=1e-11, limit=200)[0]
    return left + right


def _gaussian_lower_by_quadrature(mu: float) -> float:
    """max over a grid of x in [0, μ] of ∫ (φ(y) − φ(y − μ))² / φ(y − x) dy (log-space integrand)."""
    best = 0.0
    for x in np.linspace(0.0, mu, 9):
        def f(y, x=x):
            # (φ(y) − φ(y−μ))² / φ(y−x) = φ(y)²/φ(y−x) · (1 − e^{μy − μ²/2})²
            return math.exp(norm.logpdf(y) * 2 - norm.logpdf(y - x)) * math.expm1(mu * y - mu * mu / 2) ** 2
        val = integrate.quad(f, -40.0, 40.0, points=[0.0, mu], epsabs=0.0, epsrel=1e-11, limit=400)[0]
        best = max(best, val)
    return best


@pytest.mark.parametrize("sigma", [0.25, 0.5, 1.0, 1.9, 2.0, 2.1, 5.0, 50.0])
def test_gaussian_indices_match_direct_integration(sigma):
    mu = 1.0 / sigma
    idx = B.shuffle_index(sa.Gaussian(sigma=sigma, sensitivity=1.0))
    assert idx.upper == pytest.approx(_gaussian_upper_by_quadrature(mu), rel=1e-8)
    assert idx.lower == pytest.approx(_gaussian_lower_by_quadrature(mu), rel=1e-8)
    assert 0.0 < idx.lower < idx.upper and not idx.collapses
    # both are μ² + O(μ⁴): the band narrows as σ grows
    assert idx.lower / idx.upper <= 1.0


def test_gaussian_index_depends_on_ratio_only():
    a = B.shuffle_index(sa.Gaussian(sigma=2.0, sensitivity=1.0))
    b = B.shuffle_index(sa.Gaussian(sigma=6.0, sensitivity=3.0))
    assert a.upper == pytest.approx(b.upper, rel=1e-13) and a.lower == pytest.approx(b.lower, rel=1e-13)


def _krr_matrix(eps0: float, k: int) -> np.ndarray:
    E = math.exp(eps0)
    P = np.full((k, k), 1.0 / (E + k - 1))
    np.fill_diagonal(P, E / (E + k - 1))
    return P


def _brute_indices(P: np.ndarray) -> tuple[float, float]:
    blanket = P.min(axis=0)
    up = low = 0.0
    k = P.shape[0]
    for a in range(k):
        for b in range(k):
            if a == b:
                continue
            d2 = (P[a] - P[b]) ** 2
            up = max(up, float(np.sum(d2 / blanket)))
            low = max(low, max(float(np.sum(d2 / P[x])) for x in range(k)))
    return up, low


@pytest.mark.parametrize("eps0", [0.1, 1.0, 3.0, 6.0])
@pytest.mark.parametrize("k", [2, 3, 4, 10])
def test_krr_indices_match_brute_force(eps0, k):
    idx = B.shuffle_index(KRR(eps0, k))
    up, low = _brute_indices(_krr_matrix(eps0, k))
    assert idx.upper == pytest.approx(up, rel=1e-12)
    assert idx.lower == pytest.approx(low, rel=1e-12)
    assert idx.collapses == (k >= 3)


@pytest.mark.parametrize("index", [1e-4, 0.3, 2.9, 1e3])
@pytest.mark.parametrize("n", [10, 10 ** 5, 10 ** 8])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_leading_term_inverse_and_monotone(index, n, delta):
    eps = B.shuffle_index_epsilon(index, n, delta)
    assert eps >= 0.0
    if eps > 0:
        # the inverse hits δ (relative 1e-9), and δ decreases in ε
        assert B.shuffle_index_delta(index, n, eps) == pytest.approx(delta, rel=1e-9)
        assert B.shuffle_index_delta(index, n, 1.01 * eps) < delta < B.shuffle_index_delta(index, n, 0.99 * eps)
    else:
        assert B.shuffle_index_delta(index, n, 0.0) <= delta
    # the leading term increases with the index (d/ds [s ψ(c/s)] = φ(c/s) > 0) and ε decreases with n
    assert B.shuffle_index_epsilon(1.5 * index, n, delta) >= eps
    assert B.shuffle_index_epsilon(index, 4 * n, delta) <= eps


def test_leading_term_against_normal_integral():
    """√(χ²/n) ψ(t) is (1/n) E[(N(−nε, nχ²))_+] (checked by quadrature of the normal law)."""
    index, n, eps = 0.7, 10 ** 4, 0.02
    m, s = -n * eps, math.sqrt(n * index)
    direct = integrate.quad(lambda z: z * norm.pdf(z, m, s), 0.0, m + 40 * s, epsabs=0.0, epsrel=1e-12)[0] / n
    assert B.shuffle_index_delta(index, n, eps) == pytest.approx(direct, rel=1e-9)


def test_band_is_monotone_in_n_and_sigma():
    prev = None
    for n in (10 ** 3, 10 ** 4, 10 ** 6, 10 ** 8):
        r = B.shuffle_index_band(sa.Gaussian(sigma=2.0, sensitivity=1.0), n, 1e-8)
        lo, hi = r.settings["band"]
        assert r.sound is False and r.kind == "estimate" and r.upper is None and r.estimate == hi
        assert 0.0 < lo < hi
        if prev is not None:
            assert hi < prev[1] and lo < prev[0]
        prev = (lo, hi)
    prev = None
    for sigma in (0.5, 1.0, 2.0, 5.0, 20.0):
        lo, hi = B.shuffle_index_band(sa.Gaussian(sigma=sigma, sensitivity=1.0), 10 ** 6, 1e-8).settings["band"]
        if prev is not None:
            assert hi < prev[1] and lo < prev[0]
        prev = (lo, hi)


@pytest.mark.parametrize("sigma", [2.0, 5.0])
@pytest.mark.parametrize("delta", [1e-6, 1e-8])
def test_gaussian_band_inside_certified_bracket_at_large_n(sigma, delta):
    """At n = 1e8 the certified upper (a certified evaluation of the blanket divergence) is within 3 % of the
    upper-index asymptote, and the certified lower within 3 % of the lower-index asymptote (measured: +0.4 to
    +0.8 % and −0.3 %)."""
    n = 10 ** 8
    r = sa.epsilon(sa.Gaussian(sigma=sigma, sensitivity=1.0), n=n, delta=delta)
    lo, hi = B.shuffle_index_band(sa.Gaussian(sigma=sigma, sensitivity=1.0), n, delta).settings["band"]
    assert 0.97 <= r.upper / hi <= 1.03
    assert 0.97 <= r.lower / lo <= 1.03


@pytest.mark.parametrize("eps0", [0.5, 2.0])
@pytest.mark.parametrize("k", [2, 3, 10])
def test_krr_band_against_certified_bracket_at_large_n(eps0, k):
    """k >= 3: the collapsed band equals the certified ε to 0.5 %; k = 2: the certified ε sits at the lower index
    and the blanket (upper) index lies strictly above it."""
    n, delta = 10 ** 8, 1e-8
    r = sa.epsilon(KRR(eps0, k), n=n, delta=delta)
    lo, hi = B.shuffle_index_band(KRR(eps0, k), n, delta).settings["band"]
    assert r.upper == pytest.approx(lo, rel=5e-3) and r.lower == pytest.approx(lo, rel=5e-3)
    if k >= 3:
        assert lo == hi
    else:
        assert hi > 1.05 * r.upper


def test_bad_input_and_regime():
    with pytest.raises(ParameterError, match="index"):
        B.shuffle_index_delta(0.0, 10, 0.1)
    with pytest.raises(ParameterError, match="index"):
        B.shuffle_index_epsilon(float("nan"), 10, 1e-6)
    with pytest.raises(ParameterError, match="n"):
        B.shuffle_index_epsilon(1.0, 0, 1e-6)
    with pytest.raises(ParameterError, match="delta"):
        B.shuffle_index_band(sa.Gaussian(sigma=1.0, sensitivity=1.0), 100, 1.5)
    with pytest.raises(OutOfRegimeError):
        B.shuffle_index(Laplace(1.0))
