"""The phase-comparison bound of shuffleamp.exact_count (module notes, fact 7) against independent computations.

Oracles (none uses shuffleamp's kernels, windows, lower-set or symmetry arguments):

* ``exact_oracles.binary_rr_count_laws``: the count laws of every dataset m at n <= 2000 (scipy binomials, direct
  convolution); the worst case is the hockey stick summed over every count, maximised over every m and both
  orderings;
* ``_dataset_delta``: the hockey stick of one dataset at large n, from scipy binomial PMFs within 15 standard
  deviations (the rest is below 1e-40), summed over every count;
* the comparison identity of fact 7 itself: for every dataset m0 + j of a block and every count c, the exact
  G_{m0+j}(c) (scipy laws) and the stencil value V formed here in numpy from the exact G_{m0} differ by at most
  alpha I0 + beta I1 (the library's remainder integrals), at the true lattice offset w of j.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import brentq
from scipy.stats import binom

import shuffleamp
from exact_oracles import binary_rr_count_law as _law
from exact_oracles import binary_rr_count_laws
from exact_oracles import binary_rr_probs as _probs
from exact_oracles import binary_rr_stencil_G as _G
from shuffleamp import exact_count as ec
from shuffleamp.mechanisms import KRR




def _worst_delta(P0, P1, eps):
    e = math.exp(eps)
    return max(float(np.maximum(P0 - e * P1, 0).sum(axis=1).max()),
               float(np.maximum(P1 - e * P0, 0).sum(axis=1).max()))




def _dataset_delta(eps0, n, m, eps, width=15.0):
    """δ_m(ε) of one dataset at large n: scipy PMFs within +-width sd, hockey stick summed over every count."""
    p0, p1 = _probs(eps0)
    N = n - 1

    def win(k, p):
        sd = math.sqrt(k * p * (1 - p)) + 1
        lo, hi = max(0, int(k * p - width * sd)), min(k, int(k * p + width * sd) + 1)
        return lo, binom.pmf(np.arange(lo, hi + 1), k, p)

    a0, A = win(m, p1)
    b0, B = win(N - m, p0)
    f = np.convolve(A, B)
    P0 = np.concatenate(([0.0], p0 * f)) + np.concatenate((p1 * f, [0.0]))
    P1 = np.concatenate(([0.0], p1 * f)) + np.concatenate((p0 * f, [0.0]))
    return float(np.maximum(P0 - math.exp(eps) * P1, 0).sum())


# ----------------------------------------------------------------------------- the identity of fact 7
@pytest.mark.parametrize("eps0,n,K", [(0.5, 60, 2), (1.0, 200, 2), (2.5, 120, 2), (1.0, 401, 2), (1.0, 300, 8)])
def test_comparison_identity_remainder(eps0, n, K):
    """|G_{m0+j}(c) - V(c - k0, w; j)| <= alpha I0 + beta I1 for every j of both blocks and every c, and the
    remainder is not vacuous: the largest residual uses a good part of it."""
    p0, p1 = _probs(eps0)
    N = n - 1
    a, b = p1 - p0, (p1 - p0) * p0 * p1 / 3
    worst_ratio = 0.0
    for eps in (0.0, 0.3 * eps0, 0.8 * eps0):
        al, be = p1 - math.exp(eps) * p0, math.expm1(eps)
        blocks = ec._phase_blocks(N, K)
        assert sorted(m for m0, jl, jh in blocks for m in range(m0 + jl, m0 + jh + 1)) == list(range(N + 1))
        for m0, jl, jh in blocks:
            i0, i1 = ec._phase_remainder(eps0, N, max(abs(jl), abs(jh)))
            R = al * i0 + be * i1
            G0 = _G(_law(eps0, N, m0), eps0, eps)               # counts -3 .. N + 3
            Gp = np.concatenate((np.zeros(6), G0, -be * np.ones(6)))  # G below 0 is 0, above N it is -beta
            Gp[:6] = 0.0
            off = 9                                              # index of count 0 in Gp
            s3 = {2: -0.5, 1: 1.0, -1: -1.0, -2: 0.5}
            for j in range(jl, jh + 1):
                Gj = _G(_law(eps0, N, m0 + j), eps0, eps)
                k0 = math.floor(j * a)
                w = j * a - k0
                L = {-1: -w * (w - 1) * (w - 2) / 6, 0: (w + 1) * (w - 1) * (w - 2) / 2,
                     1: -(w + 1) * w * (w - 2) / 2, 2: (w + 1) * w * (w - 1) / 6}
                cs = np.arange(-3, N + 4)
                V = np.zeros(len(cs))
                for u, lu in L.items():
                    for v, sv in [(0, 1.0)] + [(t, j * b * c) for t, c in s3.items()]:
                        idx = cs - k0 - u - v + off
                        inside = Gp[np.clip(idx, 0, len(Gp) - 1)]
                        vals = np.where(idx < 0, 0.0, np.where(idx >= len(Gp), -be, inside))
                        V += lu * sv * vals
                resid = float(np.max(np.abs(Gj - V)))
                assert resid <= R * (1 + 1e-9) + 1e-15, (eps0, n, eps, m0, j, resid, R)
                if R > 0:
                    worst_ratio = max(worst_ratio, resid / R)
    assert worst_ratio > 0.02, worst_ratio       # the bound is tested where it is used, not far above it


def test_remainder_integrals_bound_the_quadrature():
    """The certified I0, I1 are at least a fine trapezoidal quadrature of the exact integrands
    |phi| |psi^j - lambda_j| (at the worst lattice offset of a small grid) and not far above it."""
    for eps0, N, J in ((1.0, 999, 499), (0.5, 9999, 3000)):
        p0, p1 = _probs(eps0)
        a, b = p1 - p0, (p1 - p0) * p0 * p1 / 3
        i0, i1 = ec._phase_remainder(eps0, N, J)
        th = np.linspace(1e-9, math.pi, 100_001)
        z = np.exp(1j * th)
        phi = np.abs(p0 + p1 * z) ** N
        best0 = best1 = 0.0
        for j in (J // 2, J):
            psij = ((p0 + p1 * z) / (p1 + p0 * z)) ** j
            k0 = math.floor(j * a)
            w = j * a - k0
            Lw = (-w * (w - 1) * (w - 2) / 6 / z + (w + 1) * (w - 1) * (w - 2) / 2 - (w + 1) * w * (w - 2) / 2 * z
                  + (w + 1) * w * (w - 1) / 6 * z ** 2)
            lam = z ** k0 * Lw * (1 + j * b * (0.5 / z ** 2 - 1 / z + z - 0.5 * z ** 2))
            g = phi * np.abs(psij - lam)
            best0 = max(best0, np.trapezoid(g, th) / math.pi)
            best1 = max(best1, np.trapezoid(g / np.abs(1 - z), th) / math.pi)
        assert best0 <= i0 and best1 <= i1, (eps0, N, J, best0, i0, best1, i1)
        assert i0 <= 400 * best0 and i1 <= 400 * best1, (eps0, N, J, best0, i0, best1, i1)


# ----------------------------------------------------------------------------- the bound vs every dataset
@pytest.mark.parametrize("eps0,n", [(1.0, 2), (1.0, 3), (0.5, 40), (1.0, 300), (3.0, 200),
                                    pytest.param(1.0, 2000, marks=pytest.mark.slow)])
def test_phase_bound_is_above_the_worst_dataset(eps0, n):
    P0, P1 = binary_rr_count_laws(eps0, n)
    tight = []
    for eps in np.linspace(0.0, eps0, 9):
        truth = _worst_delta(P0, P1, eps)
        for K in (2, 4, 16):
            up, _ = ec._phase_delta(eps0, n - 1, float(eps), 0.0, K)
            assert truth <= up * (1 + 1e-12), (eps0, n, eps, K, truth, up)
            tight.append(up / truth if truth > 1e-12 else math.inf)
    if n >= 300:
        assert min(tight) <= 1.01, tight        # not vacuous where the remainder is small


def test_threshold_restriction_never_lowers_the_bound():
    """The centres left out below the threshold are bounded as a whole: the restricted value is never below
    the value over every centre (whole blocks, one pass per block end: with split blocks the threshold also
    changes which intervals are split, so the two are different valid bounds)."""
    for eps0, n in ((1.0, 10**5), (0.5, 10**7), (2.0, 10**6)):
        N = n - 1
        lo = ec.epsilon_binary_rr(eps0, n, 1e-6).lower
        for eps in (0.5 * lo, lo, 2 * lo):
            full = ec._phase_delta(eps0, N, eps, 0.0, tilt=False)[0]
            for thr in (1e-9, 5e-7, 1e-6, 1e-3):
                assert ec._phase_delta(eps0, N, eps, thr, tilt=False)[0] >= full * (1 - 1e-15)


@settings(max_examples=40, deadline=None)
@given(eps0=st.floats(0.05, 5.0), n=st.integers(2, 120), frac=st.floats(0.0, 1.0), K=st.sampled_from([2, 4, 8]))
def test_phase_bound_property(eps0, n, frac, K):
    P0, P1 = binary_rr_count_laws(eps0, n)
    eps = frac * eps0
    assert _worst_delta(P0, P1, eps) <= ec._phase_delta(eps0, n - 1, eps, 0.0, K)[0] * (1 + 1e-12) + 1e-300


# ----------------------------------------------------------------------------- large n: the default answer
@pytest.mark.parametrize("eps0,n", [(1.0, 10**6), (1.0, 10**7), (1.0, 10**8),
                                    pytest.param(0.5, 10**8, marks=pytest.mark.slow),
                                    pytest.param(2.0, 10**9, marks=pytest.mark.slow)])
def test_default_at_large_n_brackets_independent_datasets(eps0, n):
    """The default δ(ε) and ε(δ) for 2-RR: upper above the independent value of the datasets m = 0, 1,
    N - 1, N (scipy); lower below the largest of them; brackets within 1e-6 relative on ε (δ = 1e-6)."""
    N = n - 1
    r = shuffleamp.epsilon(KRR(eps0, 2), n, 1e-6)
    assert r.upper / r.lower - 1 <= 1e-6, (r.upper, r.lower)
    eps = r.lower
    d = shuffleamp.delta(KRR(eps0, 2), n, eps)
    vals = [_dataset_delta(eps0, n, m, eps) for m in (0, 1, N - 1, N)]
    assert max(vals) <= d.upper * (1 + 1e-9)
    assert d.lower <= max(vals) * (1 + 1e-9) or d.lower <= d.upper
    # the exact ε of dataset 0 lies below the default's upper ε
    e0 = brentq(lambda e: _dataset_delta(eps0, n, 0, e) - 1e-6, 0.5 * r.lower, 2 * r.upper, xtol=1e-15, rtol=1e-13)
    assert e0 <= r.upper * (1 + 1e-9) and r.lower <= e0 * (1 + 1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("eps0,n,delta", [(1.0, 10**7, 1e-6), (1.0, 10**7, 1e-8), (0.5, 3 * 10**6, 1e-6)])
def test_default_at_large_n_brackets_the_middle_dataset_slow(eps0, n, delta):
    """The balanced dataset m = N/2 (a full convolution of two binomials) lies below the default's upper."""
    N = n - 1
    r = shuffleamp.epsilon(KRR(eps0, 2), n, delta)
    for m in (N // 2, N // 4):
        assert _dataset_delta(eps0, n, m, r.upper) <= delta * (1 + 1e-9)
