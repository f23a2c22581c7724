"""The default answer for binary randomized response (shuffleamp.epsilon / shuffleamp.delta with k-RR, k = 2,
or a symmetric 2 x 2 matrix) against the exact worst case over every dataset, computed independently.

Oracles (none of them uses shuffleamp's kernels, windows, lower-set or symmetry arguments):

* ``_all_pairs`` (``exact_oracles.binary_rr_count_laws``): for every m = 0..n-1 (ones among users 2..n) the two count laws over the whole support,
  from scipy.stats.binom PMFs and a direct convolution; the worst case is the maximum over every m and both
  orderings of the hockey stick summed over every count; ε(δ) is the root of that maximum (scipy brentq on
  the exact δ, which is continuous and non-increasing in ε).
* ``_mp_pair_delta``: mpmath (40 digits) hockey stick of one dataset pair at large n (log-gamma binomial
  terms over every count within 16 standard deviations, the rest below 1e-50).
"""

import math

import mpmath
import numpy as np
import pytest
from scipy.optimize import brentq

import shuffleamp
from exact_oracles import binary_rr_count_laws as _all_pairs
from exact_oracles import binary_rr_enumerated_worst_delta
from shuffleamp.mechanisms import KRR, MatrixMechanism

REL = 1e-6          # the default's bracket at converged points, relative to the exact worst case
#: Absolute floor of a δ bracket: δ = F0 - e^ε F1 cancels cumulative laws of order 1 whose certified bands are
#: a few double ulps (n = 3 at δ = 1e-9 needs ε within 3e-9 of eps0, where F0 and e^ε F1 are ~0.3 and agree
#: to 1e-9): 1e-14 is ~50 ulps of 1.
DELTA_FLOOR = 1e-14


# ----------------------------------------------------------------------------- oracles
def _worst_delta(pairs, eps):
    """max over every m and both orderings of sum_c (P(c) - e^eps Q(c))_+, and the maximising m
    (ordering "user 1 holds 0 vs 1"; the reverse ordering of m is reported as -1 - m)."""
    P0, P1 = pairs
    e = math.exp(eps)
    fwd = np.maximum(P0 - e * P1, 0.0).sum(axis=1)
    rev = np.maximum(P1 - e * P0, 0.0).sum(axis=1)
    i, j = int(np.argmax(fwd)), int(np.argmax(rev))
    return (float(fwd[i]), i) if fwd[i] >= rev[j] else (float(rev[j]), -1 - j)


def _worst_epsilon(pairs, eps0, delta):
    """The smallest ε with worst-case δ(ε) <= delta (0 when δ(0) <= delta already)."""
    if _worst_delta(pairs, 0.0)[0] <= delta:
        return 0.0
    return brentq(lambda e: _worst_delta(pairs, e)[0] - delta, 0.0, eps0, xtol=1e-17, rtol=1e-15, maxiter=200)


def _mp_pair_delta(eps0, n, m, eps, width=16):
    """mpmath δ of one dataset pair (m ones among users 2..n, user 1 holds 0 vs 1) at large n."""
    with mpmath.workdps(40):
        E = mpmath.e ** mpmath.mpf(eps0)
        p1 = E / (E + 1)
        p0 = 1 - p1
        N = n - 1

        def law(k, p):          # Bin(k, p) over its whole mass within +-width sd (callable)
            mean, sd = float(k * p), math.sqrt(float(k * p * (1 - p))) + 1
            lo, hi = max(0, int(mean - width * sd)), min(k, int(mean + width * sd) + 1)
            lg = mpmath.loggamma(k + 1)
            return lo, [mpmath.exp(lg - mpmath.loggamma(i + 1) - mpmath.loggamma(k - i + 1)
                                   + i * mpmath.log(p) + (k - i) * mpmath.log(1 - p)) for i in range(lo, hi + 1)]

        a0, A = law(m, p1)
        b0, B = law(N - m, p0)
        f = {}
        for i, x in enumerate(A):
            for j, y in enumerate(B):
                c = a0 + b0 + i + j
                f[c] = f.get(c, 0) + x * y
        e = mpmath.e ** mpmath.mpf(eps)
        tot = mpmath.mpf(0)
        for c in range(min(f), max(f) + 2):
            prev, cur = f.get(c - 1, 0), f.get(c, 0)
            P0 = p0 * prev + p1 * cur
            P1 = p1 * prev + p0 * cur
            if P0 > e * P1:
                tot += P0 - e * P1
        return float(tot)


def _krr2(eps0):
    return KRR(eps0, 2)


def _matrix2(eps0):
    E = math.exp(eps0)
    return MatrixMechanism([[E / (E + 1), 1 / (E + 1)], [1 / (E + 1), E / (E + 1)]])


# ----------------------------------------------------------------------------- the oracle itself
def test_oracle_matches_enumeration_of_every_dataset():
    """The m-indexed oracle against every bit vector of users 2..n and every report vector (n = 5)."""
    eps0, n = 1.0, 5
    pairs = _all_pairs(eps0, n)
    for eps in (0.0, 0.1, 0.5):
        best = binary_rr_enumerated_worst_delta(eps0, n, eps)
        assert abs(_worst_delta(pairs, eps)[0] - best) <= 1e-14


# ----------------------------------------------------------------------------- default vs exact, n <= 2000
def _check_epsilon(mech, eps0, n, delta, pairs):
    truth = _worst_epsilon(pairs, eps0, delta)
    r = shuffleamp.epsilon(mech, n, delta)
    assert r.lower <= truth * (1 + 1e-12) + 1e-15
    assert truth <= r.upper * (1 + 1e-12) + 1e-15
    assert r.upper - r.lower <= REL * truth + 1e-14, (n, delta, r.upper, r.lower, truth)
    return r, truth


def _check_delta(mech, n, eps, pairs):
    truth = _worst_delta(pairs, eps)[0]
    r = shuffleamp.delta(mech, n, eps)
    assert r.lower <= truth * (1 + 1e-12) + 1e-16
    assert truth <= r.upper * (1 + 1e-12) + 1e-16
    assert r.upper - r.lower <= REL * truth + DELTA_FLOOR, (n, eps, r.upper, r.lower, truth)


@pytest.mark.parametrize("eps0,n", [(1.0, 2), (0.5, 17), (1.0, 100), (2.0, 300), (1.0, 1000)])
def test_default_epsilon_and_delta_are_the_exact_worst_case(eps0, n):
    pairs = _all_pairs(eps0, n)
    for delta in (1e-3, 1e-6):
        r, truth = _check_epsilon(_krr2(eps0), eps0, n, delta, pairs)
        if truth > 0:
            _check_delta(_krr2(eps0), n, 0.5 * truth, pairs)


def test_default_matches_the_published_reference_point():
    """ε0 = 1, n = 1000, δ = 1e-6: exact worst case 0.12661448096088 (every m, both orderings)."""
    pairs = _all_pairs(1.0, 1000)
    truth = _worst_epsilon(pairs, 1.0, 1e-6)
    assert abs(truth - 0.12661448096088) <= 1e-12
    r = shuffleamp.epsilon(_krr2(1.0), 1000, 1e-6)
    assert r.lower <= truth <= r.upper and r.upper - r.lower <= 1e-6 * truth
    assert r.settings["upper_engine"] == "exact-count" and r.sound


def test_symmetric_matrix_is_binary_rr():
    pairs = _all_pairs(1.0, 200)
    _check_epsilon(_matrix2(1.0), 1.0, 200, 1e-5, pairs)


@pytest.mark.slow
@pytest.mark.parametrize("n", [3, 10, 50, 200, 500, 1000, 1500, 2000])
@pytest.mark.parametrize("eps0", [0.25, 1.0, 3.0])
def test_default_is_the_exact_worst_case_slow(eps0, n):
    pairs = _all_pairs(eps0, n)
    for delta in (1e-2, 1e-5, 1e-9):
        r, truth = _check_epsilon(_krr2(eps0), eps0, n, delta, pairs)
        for eps in (0.0, 0.3 * truth, truth):
            _check_delta(_krr2(eps0), n, eps, pairs)


# ----------------------------------------------------------------------------- large n: mpmath pairs
def _check_large_n(eps0, n, delta):
    """The default's δ at its own ε bounds: the upper is at least every sampled dataset's mpmath δ and the
    lower at most the mpmath δ of the dataset it names (worst_m)."""
    r = shuffleamp.epsilon(_krr2(eps0), n, delta)
    ec = r.settings["grid"]["exact_count"]
    eps = 0.999 * r.lower
    d = shuffleamp.delta(_krr2(eps0), n, eps)
    m_lo = d.settings["grid"]["exact_count"]["worst_m"]
    near_end = min(m_lo, n - 1 - m_lo) <= 50                # its mpmath convolution stays small
    for m in sorted({0, 1, 2, n - 2, n - 1} | ({m_lo} if near_end else set())):
        ref = _mp_pair_delta(eps0, n, m, eps)
        assert ref <= d.upper * (1 + 1e-12)
        if m == m_lo:
            assert d.lower <= ref * (1 + 1e-12)
    return r, ec


def test_large_n_brackets_mpmath_pairs():
    r, ec = _check_large_n(1.0, 10_000, 1e-6)
    assert r.upper - r.lower <= REL * r.lower          # converged at n = 1e4


@pytest.mark.slow
@pytest.mark.parametrize("n", [10_000, 100_000, 1_000_000])
@pytest.mark.parametrize("eps0", [0.5, 1.0, 2.0])
def test_large_n_brackets_mpmath_pairs_slow(eps0, n):
    _check_large_n(eps0, n, 1e-6)


# ----------------------------------------------------------------------------- ε and δ queries agree
@pytest.mark.parametrize("eps0", [0.1, 1.0])
@pytest.mark.parametrize("n", [37, 999])
def test_delta_at_the_reported_epsilon_is_at_most_the_target(eps0, n):
    """δ(ε_upper) <= δ between the default's two queries (eps0 = 0.1, n = 999, δ = 1e-11 needs the
    re-search at a smaller target: the δ search's own blocks at the first ε_upper certify more than 1e-11)."""
    for delta in (1e-3, 1e-11):
        r = shuffleamp.epsilon(_krr2(eps0), n, delta)
        d = shuffleamp.delta(_krr2(eps0), n, r.upper)
        assert d.lower <= d.upper <= delta
