"""The tilted remainder and split blocks of shuffleamp.exact_count (module notes, fact 9) against independent
computations.

Oracles (none uses shuffleamp's kernels, windows, lower-set or symmetry arguments):

* the comparison identity with the tilted remainder: for every dataset m0 + j of a block, every count c and a few
  tilts λ, the exact G_{m0+j}(c) (scipy laws) and the stencil value V formed here in numpy from the exact G_{m0}
  differ by at most exp(λ (c - k0) + log M) (alpha I0 + beta I1), the library's tilted remainder integrals;
* the tilted integrals against a fine trapezoidal quadrature of the exact integrand
  |M_{m0}(z) (psi(z)^j - lambda_j(z))| r^(-k0) / M_{m0}(r) on |z| = r (numpy complex arithmetic);
* the bound of fact 9 with its threshold restriction against the worst case over every dataset at n <= 2000
  (``exact_oracles.binary_rr_count_laws``, every count summed);
* ``_mp_dataset_delta``: the hockey stick of one dataset at large n in mpmath (40 digits), binomial PMFs by their
  ratio recurrence from a log-gamma start, summed over every count within 16 standard deviations: the default's
  ε bracket at δ = 1e-8 (the cells fact 9 tightens) is checked against the dataset the library names as the
  worst and against the datasets next to both ends.
"""

import math

import mpmath
import numpy as np
import pytest
from scipy.stats import binom

import shuffleamp
from exact_oracles import binary_rr_count_law as _law
from exact_oracles import binary_rr_probs as _probs
from exact_oracles import binary_rr_stencil_G as _G
from shuffleamp import exact_count as ec
from shuffleamp.mechanisms import KRR




def _weights(w):
    return {-1: -w * (w - 1) * (w - 2) / 6, 0: (w + 1) * (w - 1) * (w - 2) / 2,
            1: -(w + 1) * w * (w - 2) / 2, 2: (w + 1) * w * (w - 1) / 6}


# ----------------------------------------------------------------------------- the identity with the tilted remainder
def _identity_ratio(eps0, n, K, lams):
    p0, p1 = _probs(eps0)
    N = n - 1
    a, b = p1 - p0, (p1 - p0) * p0 * p1 / 3
    s3 = {2: -0.5, 1: 1.0, -1: -1.0, -2: 0.5}
    worst = 0.0
    for eps in (0.0, 0.3 * eps0, 0.8 * eps0):
        al, be = p1 - math.exp(eps) * p0, math.expm1(eps)
        for m0, jl, jh in ec._phase_blocks(N, K):
            G0 = _G(_law(eps0, N, m0), eps0, eps)
            Gp = np.concatenate((np.zeros(6), G0, -be * np.ones(6)))
            Gp[:6] = 0.0
            off = 9
            # sub-intervals of the block as the split bound uses them, and the whole block
            for j1, j2 in {(jl, jh), (0, jh // 3) if jh > 0 else (jl // 3, 0)}:
                rems = [(lam,) + ec._tilted_remainder(eps0, N, m0, j1, j2, lam) for lam in lams]
                for j in range(j1, j2 + 1):
                    Gj = _G(_law(eps0, N, m0 + j), eps0, eps)
                    k0 = math.floor(j * a)
                    cs = np.arange(-3, N + 4)
                    V = np.zeros(len(cs))
                    for u, lu in _weights(j * a - k0).items():
                        for v, sv in [(0, 1.0)] + [(t, j * b * c) for t, c in s3.items()]:
                            idx = cs - k0 - u - v + off
                            inside = Gp[np.clip(idx, 0, len(Gp) - 1)]
                            V += lu * sv * np.where(idx < 0, 0.0, np.where(idx >= len(Gp), -be, inside))
                    resid = np.abs(Gj - V)
                    for lam, log_m, i0, i1 in rems:
                        R = np.exp(lam * (cs - k0) + log_m) * (al * i0 + be * i1)
                        assert np.all(resid <= R * (1 + 1e-9) + 1e-15), (eps0, n, eps, m0, j, lam)
                        big = resid > 1e-13
                        if big.any():
                            worst = max(worst, float(np.max(resid[big] / R[big])))
    return worst


@pytest.mark.parametrize("eps0,n,K,lams", [
    (1.0, 200, 2, (0.02, 0.1, 0.4)),
    (2.5, 120, 2, (0.03, 0.3, 1.0)),
    pytest.param(0.5, 60, 2, (0.05, 0.2, 0.6), marks=pytest.mark.slow),
    pytest.param(1.0, 401, 2, (0.01, 0.05, 0.2), marks=pytest.mark.slow),
    pytest.param(1.0, 300, 8, (0.02, 0.1, 0.3), marks=pytest.mark.slow),
])
def test_comparison_identity_tilted_remainder(eps0, n, K, lams):
    """|G_{m0+j}(c) - V(c - k0, w; j)| <= Rem_λ(c - k0) for every j of the blocks and of a sub-interval at the
    base, every count c and every tilt; and the remainder is not vacuous (some residual uses 2 % of it)."""
    assert _identity_ratio(eps0, n, K, lams) > 0.02


def test_tilted_integrals_bound_the_quadrature():
    """The certified tilted I0, I1 are at least a fine trapezoidal quadrature of the exact integrand (at the
    worst of a few datasets of the block) and not far above it."""
    for eps0, N, m0, jl, jh, lam in ((1.0, 999, 0, 0, 499, 0.05), (0.5, 9999, 0, 0, 3000, 0.02),
                                     (2.0, 4999, 4999, -2500, 0, 0.04), (1.0, 9999, 0, 0, 40, 0.03)):
        p0, p1 = _probs(eps0)
        a, b = p1 - p0, (p1 - p0) * p0 * p1 / 3
        log_m, i0, i1 = ec._tilted_remainder(eps0, N, m0, jl, jh, lam)
        r = math.exp(-lam)
        assert log_m == pytest.approx(m0 * math.log(p0 + p1 * r) + (N - m0) * math.log(p1 + p0 * r), rel=1e-12)
        th = np.linspace(0.0, math.pi, 60_001)
        z = r * np.exp(1j * th)
        best0 = best1 = 0.0
        for j in sorted({jl, jh, (jl + jh) // 2, (jl + jh) // 7}):
            k0 = math.floor(j * a)
            L = _weights(j * a - k0)
            Lw = sum(lu * z ** u for u, lu in L.items())
            lam_hat = z ** k0 * Lw * (1 + j * b * (0.5 / z ** 2 - 1 / z + z - 0.5 * z ** 2))
            Mz = (p0 + p1 * z) ** m0 * (p1 + p0 * z) ** (N - m0)
            exact = (p0 + p1 * z) ** (m0 + j) * (p1 + p0 * z) ** (N - m0 - j)     # M_{m0+j}(z)
            g = np.abs(exact - Mz * lam_hat) / (r ** k0 * math.exp(log_m))
            best0 = max(best0, np.trapezoid(g, th) / math.pi)
            best1 = max(best1, r * np.trapezoid(g / np.abs(1 - z), th) / math.pi)
        assert best0 <= i0 and best1 <= i1, (eps0, N, jl, jh, best0, i0, best1, i1)
        assert i0 <= 100 * best0 and i1 <= 100 * best1, (eps0, N, jl, jh, best0, i0, best1, i1)   # 12 .. 17 here


# ----------------------------------------------------------------------------- large n at δ = 1e-8: mpmath datasets
def _mp_binom(k, p, width):
    """Bin(k, p) on [lo, hi] (within width sd), mpmath, by the ratio recurrence from a log-gamma value at the mode."""
    mean, sd = k * p, math.sqrt(k * p * (1 - p)) + 1
    lo, hi = max(0, int(mean - width * sd)), min(k, int(mean + width * sd) + 1)
    mode = min(max(int(mean), lo), hi)
    p, q = mpmath.mpf(p), 1 - mpmath.mpf(p)
    start = mpmath.exp(mpmath.loggamma(k + 1) - mpmath.loggamma(mode + 1) - mpmath.loggamma(k - mode + 1)
                       + mode * mpmath.log(p) + (k - mode) * mpmath.log(q))
    out = {mode: start}
    odds = p / q
    for i in range(mode, hi):
        out[i + 1] = out[i] * (k - i) / (i + 1) * odds
    for i in range(mode, lo, -1):
        out[i - 1] = out[i] * i / (k - i + 1) / odds
    return lo, [out[i] for i in range(lo, hi + 1)]


def _mp_dataset_delta(eps0, n, m, eps, width=16):
    """mpmath δ of the dataset pair with m ones among users 2..n (user 1 holds 0 vs 1): every count summed."""
    with mpmath.workdps(40):
        E = mpmath.e ** mpmath.mpf(eps0)
        p1 = E / (E + 1)
        p0 = 1 - p1
        a0, A = _mp_binom(m, float(p1), width)
        b0, B = _mp_binom(n - 1 - m, float(p0), width)
        f = [mpmath.mpf(0)] * (len(A) + len(B) - 1)
        for i, x in enumerate(A):
            for j, y in enumerate(B):
                f[i + j] += x * y
        e = mpmath.e ** mpmath.mpf(eps)
        tot = mpmath.mpf(0)
        prev = mpmath.mpf(0)
        for cur in f + [mpmath.mpf(0)]:
            d = (p0 * prev + p1 * cur) - e * (p1 * prev + p0 * cur)
            if d > 0:
                tot += d
            prev = cur
        return float(tot)


def _check_tight_cell(eps0, n, delta, ms_extra):
    m = KRR(eps0, 2)
    r = shuffleamp.epsilon(m, n, delta)
    assert r.upper / r.lower - 1 <= 1e-6, (eps0, n, delta, r.upper, r.lower)
    worst = r.settings["grid"]["exact_count"]["worst_m"]
    N = n - 1
    # the named dataset needs at least the lower ε: its δ at the lower is not below the target
    assert _mp_dataset_delta(eps0, n, worst, r.lower) >= delta * (1 - 1e-9)
    # the upper ε is enough for the named dataset and for the datasets next to both ends
    for mm in sorted({worst, 0, N} | {x for x in ms_extra if 0 <= x <= N}):
        assert _mp_dataset_delta(eps0, n, mm, r.upper) <= delta * (1 + 1e-12), (eps0, n, mm)
    return r


def test_tightened_cell_mpmath():
    _check_tight_cell(1.0, 10**6, 1e-8, ())


@pytest.mark.slow
@pytest.mark.parametrize("eps0,n", [(0.5, 3 * 10**5), (2.0, 10**6), (0.5, 10**6), (1.0, 10**7), (2.0, 10**7)])
def test_tightened_cells_mpmath_slow(eps0, n):
    _check_tight_cell(eps0, n, 1e-8, (1, 2, 3, n - 2, n - 3))


# ----------------------------------------------------------------------------- the split bound vs every dataset
@pytest.mark.parametrize("eps0,n", [(1.0, 300), (0.5, 500), (3.0, 200),
                                    pytest.param(1.0, 2000, marks=pytest.mark.slow),
                                    pytest.param(2.0, 1500, marks=pytest.mark.slow)])
def test_split_bound_with_threshold_is_above_the_worst_dataset(eps0, n):
    """The bound of fact 9 (tilted remainder, split blocks), with the threshold restriction at half the true value,
    is at least the worst case over every dataset and both orderings (scipy laws, every count summed)."""
    from exact_oracles import binary_rr_count_laws
    P0, P1 = binary_rr_count_laws(eps0, n)
    for eps in np.linspace(0.05 * eps0, 0.9 * eps0, 6):
        e = math.exp(eps)
        truth = max(float(np.maximum(P0 - e * P1, 0).sum(axis=1).max()),
                    float(np.maximum(P1 - e * P0, 0).sum(axis=1).max()))
        for K in (2, 4):
            up, _ = ec._phase_delta(eps0, n - 1, float(eps), 0.5 * truth, K)
            assert truth <= up * (1 + 1e-12), (eps0, n, eps, K, truth, up)
