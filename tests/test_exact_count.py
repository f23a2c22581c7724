"""Exact shuffled binary randomized response (shuffleamp.exact_count) against independent
computations: enumeration of every report vector, mpmath binomial sums over every count and
every dataset, and the decomposition bounds of shuffleamp.epsilon."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import example, HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from scipy.stats import binom

import shuffleamp
from shuffleamp.errors import ParameterError, ResourceLimitError
from shuffleamp.exact_count import count_pmfs, delta_binary_rr, epsilon_binary_rr
from shuffleamp.mechanisms import KRR

from decomposition_side import both_engines
from exact_oracles import binary_rr_enumerated_worst_delta as _enumerated_worst_delta


# ----------------------------------------------------------------------------- references
def _mp_count_laws(eps0, bits_or_m, n):
    """mpmath laws of the count for user 1 = 0 and = 1, given m ones among users 2..n
    (direct convolution of the n Bernoulli laws, every count value)."""
    E = mpmath.e ** mpmath.mpf(eps0)
    p1 = E / (E + 1)
    p0 = 1 - p1
    law = [mpmath.mpf(1)]
    m = bits_or_m
    for i in range(n - 1):
        q = p1 if i < m else p0
        new = [mpmath.mpf(0)] * (len(law) + 1)
        for c, w in enumerate(law):
            new[c] += w * (1 - q)
            new[c + 1] += w * q
        law = new
    out = []
    for q in (p0, p1):           # user 1 holds 0: reports one w.p. p0
        P = [mpmath.mpf(0)] * (len(law) + 1)
        for c, w in enumerate(law):
            P[c] += w * (1 - q)
            P[c + 1] += w * q
        out.append(P)
    return out


def _mp_worst_delta(eps0, n, eps):
    """max over every m and both orderings of sum_c (P(c) - e^eps Q(c))_+ (no lower-set
    argument, no symmetry argument)."""
    e = mpmath.e ** mpmath.mpf(eps)
    best = mpmath.mpf(0)
    for m in range(n):
        P0, P1 = _mp_count_laws(eps0, m, n)
        for P, Q in ((P0, P1), (P1, P0)):
            best = max(best, sum(max(a - e * b, 0) for a, b in zip(P, Q)))
    return best


def _mp_eps(eps0, n, delta):
    """Root of the mpmath worst-case δ(ε) = delta by bisection (to 1e-13)."""
    lo, hi = 0.0, float(eps0)
    if _mp_worst_delta(eps0, n, 0.0) <= delta:
        return 0.0
    while hi - lo > 1e-13:
        mid = 0.5 * (lo + hi)
        if _mp_worst_delta(eps0, n, mid) > delta:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


# ----------------------------------------------------------------------------- exact matches
@pytest.mark.parametrize("eps0,n", [(0.5, 2), (1.0, 3), (2.0, 4), (1.0, 6), (4.0, 7)])
def test_matches_enumeration_of_every_report_vector(eps0, n):
    for eps in (0.0, 0.05, 0.3, 1.0):
        ref = _enumerated_worst_delta(eps0, n, eps)
        r = delta_binary_rr(eps0, n, eps)
        assert r.lower - 1e-12 <= ref <= r.upper + 1e-12
        assert r.error <= 1e-12
        assert r.converged


FAST_GRID = [(0.1, 5), (0.5, 10), (1.0, 13), (2.0, 20), (1.0, 30), (4.0, 30), (0.5, 1)]


@pytest.mark.parametrize("eps0,n", FAST_GRID)
def test_delta_matches_mpmath_every_dataset(eps0, n):
    eps = np.array([0.0, 0.01, 0.1, 0.3, 1.0])
    eps = eps[eps <= eps0]
    r = delta_binary_rr(eps0, n, eps)
    for i, e in enumerate(eps):
        ref = float(_mp_worst_delta(eps0, n, e))
        assert abs(r.upper[i] - ref) <= 1e-12 and abs(r.lower[i] - ref) <= 1e-12
        assert r.lower[i] <= ref + 1e-15 <= r.upper[i] + 2e-15


@pytest.mark.slow
@pytest.mark.parametrize("eps0,n", [(e0, n) for e0 in (0.1, 0.5, 1.0, 2.0, 4.0) for n in range(2, 31)])
def test_delta_matches_mpmath_every_dataset_slow(eps0, n):
    test_delta_matches_mpmath_every_dataset(eps0, n)


@pytest.mark.parametrize("eps0,n,delta", [(1.0, 10, 1e-2), (0.5, 20, 1e-2), (2.0, 30, 1e-3)])
def test_epsilon_brackets_mpmath_root(eps0, n, delta):
    ref = _mp_eps(eps0, n, delta)
    r = epsilon_binary_rr(eps0, n, delta)
    assert r.lower <= ref + 1e-12 and ref <= r.upper + 1e-12
    assert r.error <= 1e-10


def _worst_float(eps0, n, eps):
    """Float reference for n <= 2000: every m, every count, both orderings (scipy binomials,
    direct convolution)."""
    E = math.exp(eps0)
    p1 = E / (E + 1)
    N = n - 1
    best = 0.0
    for m in range(N + 1):
        f = np.convolve(binom.pmf(np.arange(m + 1), m, p1), binom.pmf(np.arange(N - m + 1), N - m, 1 - p1))
        a, b = np.concatenate(([0.0], f)), np.concatenate((f, [0.0]))
        P0, P1 = (1 - p1) * a + p1 * b, p1 * a + (1 - p1) * b
        best = max(best, np.maximum(P0 - math.exp(eps) * P1, 0).sum(), np.maximum(P1 - math.exp(eps) * P0, 0).sum())
    return best


@pytest.mark.parametrize("eps0,n,eps", [(1.0, 100, 0.3), (0.5, 200, 0.1)])
def test_worst_over_m_float_reference(eps0, n, eps):
    ref = _worst_float(eps0, n, eps)
    r = delta_binary_rr(eps0, n, eps)
    assert r.lower - 1e-12 <= ref <= r.upper + 1e-12
    assert r.error <= 1e-12 + 1e-9 * ref


@pytest.mark.slow
@pytest.mark.parametrize("n", [50, 100, 300, 500, 1000, 1500, 2000])
@pytest.mark.parametrize("eps0", [0.5, 1.0, 2.0, 4.0])
def test_worst_over_m_float_reference_slow(eps0, n):
    for eps in (0.0, 0.02, 0.1, 0.3):
        ref = _worst_float(eps0, n, eps)
        r = delta_binary_rr(eps0, n, eps, max_pairs=100_000)
        assert r.lower - 1e-12 <= ref <= r.upper + 1e-12


# ----------------------------------------------------------------------------- mpmath, large n
def _mp_pair_delta(eps0, n, m, eps, width=16):
    """mpmath δ of the pair with m in {0, 1} at large n: sum over counts within +-width sigma
    (the rest is below 1e-40 here), binomial terms from log-gamma at 50 digits."""
    mpmath.mp.dps = 50
    E = mpmath.e ** mpmath.mpf(eps0)
    p1 = E / (E + 1)
    p0 = 1 - p1
    N = n - 1 - m                                   # users of type p0 besides user 1 and the m ones
    mean, sd = float(N * p0), math.sqrt(float(N * p0 * p1))
    lo, hi = max(0, int(mean - width * sd)), min(N, int(mean + width * sd) + 1)

    def B(k):
        if k < 0 or k > N:
            return mpmath.mpf(0)
        return mpmath.exp(mpmath.loggamma(N + 1) - mpmath.loggamma(k + 1) - mpmath.loggamma(N - k + 1)
                          + k * mpmath.log(p0) + (N - k) * mpmath.log(p1))

    Bs = {k: B(k) for k in range(lo - 3, hi + 4)}

    def f(c):                                      # S = Bin(m, p1) + Bin(N, p0), m in {0, 1}
        if m == 0:
            return Bs.get(c, mpmath.mpf(0))
        return p1 * Bs.get(c - 1, mpmath.mpf(0)) + p0 * Bs.get(c, mpmath.mpf(0))

    e = mpmath.e ** mpmath.mpf(eps)
    tot = mpmath.mpf(0)
    for c in range(lo, hi + 3):
        P0 = p0 * f(c - 1) + p1 * f(c)
        P1 = p1 * f(c - 1) + p0 * f(c)
        tot += max(P0 - e * P1, 0)
    mpmath.mp.dps = 15
    return float(tot)


def _pair_bracket(eps0, n, m, eps):
    pm = count_pmfs(eps0, n, m)
    c = np.cumsum(pm.p0) - math.exp(eps) * np.cumsum(pm.p1)
    v = float(c.max())
    slack = pm.rel_error * (1 + math.exp(eps)) + pm.tail * (1 + math.exp(eps)) + 1e-15
    return v - slack, v + slack


@pytest.mark.parametrize("eps0,n,eps,m", [(1.0, 10_000, 0.05, 0), (0.5, 10_000, 0.03, 1)])
def test_pair_matches_mpmath_large_n(eps0, n, eps, m):
    ref = _mp_pair_delta(eps0, n, m, eps)
    lo, hi = _pair_bracket(eps0, n, m, eps)
    assert lo <= ref <= hi
    r = delta_binary_rr(eps0, n, eps, max_pairs=16)
    assert r.upper >= ref - 1e-14 and r.lower >= ref * (1 - 1e-9) - 1e-14   # m in {0..4} evaluated


@pytest.mark.slow
@pytest.mark.parametrize("n", [10_000, 100_000, 1_000_000])
@pytest.mark.parametrize("eps0,m", [(0.5, 0), (1.0, 1), (2.0, 0)])
def test_pair_matches_mpmath_large_n_slow(eps0, n, m):
    eps = 3.0 / math.sqrt(n)
    ref = _mp_pair_delta(eps0, n, m, eps)
    lo, hi = _pair_bracket(eps0, n, m, eps)
    assert lo <= ref <= hi


# ----------------------------------------------------------------------------- exact count law against the decomposition bound
def _decomposition(mech, n, delta):
    return both_engines("epsilon", mech, n, delta).settings["grid"]["decomposition"]


@pytest.mark.parametrize("n", [1_000, 10_000, 100_000])
def test_exact_is_15_to_20_percent_below_decomposition(n):
    r = epsilon_binary_rr(1.0, n, 1e-6, max_pairs=64)
    d = _decomposition(KRR(1.0, 2), n, 1e-6)
    gap = 1 - r.upper / d["upper"]
    assert 0.14 <= gap <= 0.21
    assert d["lower"] <= r.upper and r.lower <= d["upper"]


def test_reverse_ordering_gives_the_worst_dataset_lower_bound():
    # dataset "others all 1", user 1 reversed (1 vs 0) = m = 0 in the 0-vs-1 ordering
    r = epsilon_binary_rr(0.5, 10_000, 1e-6, max_pairs=64)
    assert r.lower >= 0.016181 and r.lower < 0.016182
    assert r.worst_m == 0
    b = shuffleamp.epsilon(KRR(0.5, 2), 10_000, 1e-6)
    assert b.lower >= 0.016181 and b.settings["lower_engine"] == "exact-count"
    d = _decomposition(KRR(0.5, 2), 10_000, 1e-6)
    assert b.upper <= d["upper"]
    # the decomposition side alone takes both orderings of the documented dataset
    assert d["lower"] >= 0.016181


# ----------------------------------------------------------------------------- properties
@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(eps0=st.sampled_from([0.25, 0.5, 1.0, 2.0, 3.0]),
       n=st.integers(2, 3000),
       log_delta=st.floats(-9, -2))
@example(eps0=3.0, n=67, log_delta=-7.0)
def test_between_decomposition_bounds(eps0, n, log_delta):
    d = 10.0 ** log_delta
    r = epsilon_binary_rr(eps0, n, d, max_pairs=64)
    full = shuffleamp.epsilon(KRR(eps0, 2), n, d)
    b = _decomposition(KRR(eps0, 2), n, d)
    # truth in [r.lower, r.upper] and in [b_lower, b_upper]: the brackets must intersect.  (r.upper may
    # exceed b_upper by up to r's own certified bracket width near eps0, e.g. eps0=3, n=67, delta=1e-7.)
    assert r.lower <= b["upper"] * (1 + 1e-9) + 1e-12
    assert r.upper >= b["lower"] * (1 - 1e-9) - 1e-12
    assert r.lower <= r.upper
    # the default combines both: never worse than either engine, except that it skips the decomposition
    # where the count law converged (upper within its tolerance rtol = 1e-7 of a certified lower) and its
    # lower bound always (the same dataset pairs m = 0, n - 1, evaluated exactly by the count law: they
    # differ by the numerical bands only)
    assert full.upper <= b["upper"] * (1 + 1e-7) + 1e-12
    assert full.lower >= b["lower"] * (1 - 1e-7) - 1e-12 and full.lower <= full.upper


@settings(max_examples=examples(100), deadline=None)
@given(eps0=st.sampled_from([0.3, 1.0, 2.5]), n=st.integers(1, 5000), k=st.integers(1, 500),
       log_delta=st.floats(-9, -2))
def test_epsilon_non_increasing_in_n(eps0, n, k, log_delta):
    d = 10.0 ** log_delta
    r = epsilon_binary_rr(eps0, [n, n + k], d, max_pairs=64)
    assert r.lower[1] <= r.upper[0] + 1e-12


def test_vectorised_and_scalar_agree():
    r = delta_binary_rr(1.0, [10, 50], [0.1, 0.2])
    for i, (n, e) in enumerate([(10, 0.1), (50, 0.2)]):
        s = delta_binary_rr(1.0, n, e)
        assert s.upper == r.upper[i] and s.lower == r.lower[i] and s.worst_m == r.worst_m[i]
    assert r.upper.shape == (2,)


def test_count_pmfs_window():
    pm = count_pmfs(1.0, 1000, 3)
    assert abs(pm.p0.sum() - 1) < 1e-12 and abs(pm.p1.sum() - 1) < 1e-12
    assert pm.tail <= 1e-20 and pm.p0.shape == pm.p1.shape
    E = math.exp(1.0)
    assert np.all(pm.p0 <= E * pm.p1 * (1 + 1e-9)) and np.all(pm.p1 <= E * pm.p0 * (1 + 1e-9))


# ----------------------------------------------------------------------------- bad input
def test_bad_input():
    with pytest.raises(ParameterError) as e:
        delta_binary_rr(0.0, 10, 0.1)
    assert e.value.parameter == "eps0"
    with pytest.raises(ParameterError) as e:
        epsilon_binary_rr(1.0, 10, 1.5)
    assert e.value.parameter == "delta"
    with pytest.raises(ParameterError) as e:
        delta_binary_rr(1.0, 0, 0.1)
    assert e.value.parameter == "n"
    with pytest.raises(ParameterError) as e:
        count_pmfs(1.0, 10, 10)
    assert e.value.parameter == "m"
    with pytest.raises(ParameterError) as e:
        delta_binary_rr(1.0, 10, float("nan"))
    assert e.value.parameter == "epsilon"


def test_window_too_large_raises_naming_n():
    with pytest.raises(ResourceLimitError) as e:
        epsilon_binary_rr(0.1, 10**17, 1e-6)
    assert e.value.parameter == "n" and "n =" in str(e.value)


# ----------------------------------------------------------------------------- registry / default method
def test_exact_count_method_through_the_registry():
    r = shuffleamp.epsilon(KRR(1.0, 2), 10_000, 1e-6, method="exact-count")
    e = shuffleamp.exact_count.default_point(1.0, 10_000, 1e-6, True)      # the engine the method routes to
    assert r.method == "exact-count" and r.sound and r.upper == e.upper and r.lower == e.lower
    assert r.upper - r.lower <= 1e-6 * r.lower                               # converged at n = 1e4
    d = shuffleamp.delta(KRR(1.0, 2), [1000, 10_000], 0.05, method="exact-count")
    assert d.upper.shape == (2,) and np.all(d.lower <= d.upper)
    from shuffleamp.errors import OutOfRegimeError
    with pytest.raises(OutOfRegimeError):
        shuffleamp.epsilon(KRR(1.0, 3), 100, 1e-6, method="exact-count")


@pytest.mark.parametrize("n,delta", [(1000, 1e-6), (10_000, 1e-6), (10**6, 1e-8)])
def test_default_method_uses_exact_count_for_binary_rr(n, delta):
    r = shuffleamp.epsilon(KRR(1.0, 2), n, delta)
    dec = _decomposition(KRR(1.0, 2), n, delta)
    ec = r.settings["grid"]["exact_count"]
    assert r.upper == ec["upper"] and r.lower == ec["lower"]
    full = both_engines("epsilon", KRR(1.0, 2), n, delta)
    assert full.upper == min(dec["upper"], ec["upper"]) and full.lower == max(dec["lower"], ec["lower"])
    assert r.settings["upper_engine"] == "exact-count"          # 14-17 % below the decomposition here
    assert r.upper < 0.9 * dec["upper"] and r.lower <= r.upper
    # the symmetric 2 x 2 matrix is binary RR too
    E = math.exp(1.0)
    m = shuffleamp.mechanisms.MatrixMechanism([[E / (E + 1), 1 / (E + 1)], [1 / (E + 1), E / (E + 1)]])
    rm = shuffleamp.epsilon(m, n, delta)
    assert rm.settings["upper_engine"] == "exact-count" and abs(rm.upper - r.upper) <= 1e-9 * r.upper


def test_default_upper_never_above_decomposition_near_eps0():
    # near eps0 the exact-count upper can exceed the decomposition upper by its bracket: the min is taken
    for eps0, n, delta in [(3.0, 67, 1e-7), (4.0, 100, 1e-6)]:
        r = shuffleamp.epsilon(KRR(eps0, 2), n, delta)
        dec = _decomposition(KRR(eps0, 2), n, delta)
        assert r.upper <= dec["upper"] and r.lower >= dec["lower"] * (1 - 1e-7) and r.lower <= r.upper <= eps0


def test_default_delta_and_epsilon_consistent_for_binary_rr():
    for n in (10, 10**4, 10**8):
        d = 0.01 / n
        r = shuffleamp.epsilon(KRR(1.0, 2), n, d)
        x = shuffleamp.delta(KRR(1.0, 2), n, r.upper)
        assert x.lower <= x.upper <= d * (1 + 1e-12)


def test_cli_epsilon_k2_reports_exact_count(capsys):
    import json
    from shuffleamp.cli import main
    code = main(["epsilon", "--mechanism", "krr", "--k", "2", "--eps0", "1", "--n", "10000", "--delta", "1e-6",
                 "--json"])
    out = capsys.readouterr().out
    assert code == 0
    doc = json.loads(out)["result"]
    assert doc["settings"]["upper_engine"] == "exact-count"
    assert doc["bounds"]["upper"]["evaluator"] == "exact-count"
    assert doc["epsilon_upper"] < 0.0370 and doc["epsilon_lower"] >= 0.03565


# ----------------------------------------------------------------------------- lower bounds (every mechanism)
import oracle as O  # noqa: E402  (tests/oracle.py: brute-force histogram laws)
from exact_oracles import gparv_bruteforce  # noqa: E402
from shuffleamp.bounds import _families, _projection_sets  # noqa: E402
from shuffleamp.exact_count import projection_pair_bounds  # noqa: E402
from shuffleamp.mechanisms import BLH, OUE, MatrixMechanism  # noqa: E402


def _small_mechs():
    rng = np.random.default_rng(3)
    R = rng.uniform(1.0, math.exp(1.5), size=(3, 4))
    R /= R.sum(axis=1, keepdims=True)
    return [KRR(1.0, 2), KRR(2.0, 3), KRR(0.7, 4), BLH(1.0, 3), OUE(0.8, 3), MatrixMechanism(R)]


@pytest.mark.parametrize("mech", _small_mechs(), ids=lambda m: f"{m.name}")
def test_lower_families_and_projections_below_enumerated_truth(mech):
    """Every lower family (both orderings) is at most the worst enumerated dataset divergence and each
    swapped family is the reverse divergence of a concrete pair; every count projection is at most it."""
    P = mech.matrix()
    fams = _families(mech, "optimal", "lower")
    sets = _projection_sets(fams)
    assert sets
    for n in (2, 3, 4):
        for frac in (0.0, 0.1, 0.5):
            eps = frac * mech.eps0
            truth = O.worst_dataset_divergence(P, n, eps)
            for f in fams:
                g = f.gparv(eps)
                assert float(gparv_bruteforce(g.values, g.probs, n)) <= truth + 1e-14
            for a, b, c, _ in sets:
                up, lo = projection_pair_bounds(a, b, c, n, eps, False)
                assert lo <= truth + 1e-14 and lo <= up
            r = shuffleamp.delta(mech, n, eps)
            assert r.lower <= truth + 1e-14 <= r.upper + 2e-14


def test_reverse_ordering_is_the_reverse_divergence():
    mech = KRR(1.0, 2)
    P = mech.matrix()
    d = mech.lower_decompositions()[0]          # dataset (0 | 1; others 1)
    for n in (2, 4):
        for eps in (0.1, 0.4):
            g = d.swapped().gparv(eps)
            X0, X1 = O.clump_datasets(0, 1, 1, n)
            want = O.directed_divergence(P, X1, X0, eps)
            assert abs(float(gparv_bruteforce(g.values, g.probs, n)) - want) <= 1e-12 * want + 1e-15


def test_binary_projection_is_the_exact_dataset_divergence():
    # k = 2: the count of ones is sufficient, so the projection S = {1} is exact
    mech = KRR(1.0, 2)
    P = mech.matrix()
    E = math.exp(1.0)
    for n in (2, 5):
        for eps in (0.0, 0.2, 0.6):
            X0, X1 = O.clump_datasets(0, 1, 1, n)
            want = max(O.directed_divergence(P, X0, X1, eps), O.directed_divergence(P, X1, X0, eps))
            up, lo = projection_pair_bounds(1 / (E + 1), E / (E + 1), E / (E + 1), n, eps, False)
            assert lo - 1e-14 <= want <= up + 1e-14 and up - lo <= 1e-13


def test_lower_never_silently_zero_at_large_eps0():
    """k-RR, eps0 = 20, k = 10, n = 1e5, delta = 1e-8 (rare atoms of mass 2e-9): the Theorem-14 evaluation
    resolves the n-fold sum by exact binomial-mixture sums (windowed at any n); where it cannot, the count
    projection gives a valid, explained lower bound. Never a silent 0."""
    r = shuffleamp.epsilon(KRR(20.0, 10), 10**5, 1e-8)
    assert r.lower > 17.0 and r.lower <= r.upper
    if r.settings["lower_engine"] == "count-projection":
        assert "weak lower bound" in r.settings["lower_note"]
    else:
        # the Theorem-14 pair dominates the count projection (a post-processing of it): at least its value
        assert r.settings["lower_engine"] == "decomposition"
        assert r.lower >= math.log((math.exp(20.0) + 9) / 9) * (1 - 1e-6)
    # the projected pair itself: user 1 reports output 1 w.p. p (x0 = 0) vs E p (x1 = 1), others w.p. p
    E = math.exp(20.0)
    p = 1 / (E + 9)
    up, lo = projection_pair_bounds(p, E * p, p, 10**5, 1e-8, True)
    assert lo == pytest.approx(math.log((E + 9) / 9), rel=1e-6)      # the event "no report equals 1"


# ----------------------------------------------------------------------------- batched profile
@pytest.mark.parametrize("eps0,n", [(1.0, 13), (0.5, 30), (4.0, 20), (1.0, 150)])
def test_profile_brackets_the_worst_case(eps0, n):
    from shuffleamp.exact_count import profile_binary_rr
    eps = np.array([0.0, 0.01, 0.1, 0.3, 0.9]) * eps0
    up, lo = profile_binary_rr(eps0, n, eps)
    r = delta_binary_rr(eps0, n, eps, max_pairs=8)
    for i, e in enumerate(eps):
        ref = _worst_float(eps0, n, e)
        assert lo[i] - 1e-13 <= ref <= up[i] + 1e-13
        # same count laws as the search: same values up to the rounding of e^eps (and the hull slack)
        assert up[i] >= r.upper[i] * (1 - 1e-12) and abs(lo[i] - r.lower[i]) <= 1e-12 * r.lower[i] + 1e-16


# ----------------------------------------------------------------------------- default method: count law first
# The default method runs the count law first and the decomposition only where it can improve on it
# (bounds._binary_rr_point); the initial set of the count search has exact ends, geometric blocks next to
# them and every m exact below exact_count.SINGLES_MAX_N.  Checked against independent references:
# the mpmath worst case over every m and both orderings (n <= 30), the float reference over every m and
# every count (n <= 2000), and the mpmath law of the pairs m = 0, 1 at large n (a lower bound on the
# worst case, which every certified upper must exceed).
def _check_eps_against(worst_delta, r, delta, abs_tol):
    """r.upper is certified: the reference worst-case delta at r.upper is <= delta; r.lower is a lower
    bound: the reference at r.lower is >= delta (unless r.lower == 0)."""
    assert 0.0 <= r.lower <= r.upper
    if r.upper < r.settings.get("eps0_cap", math.inf):
        assert worst_delta(r.upper) <= delta * (1 + 1e-9) + abs_tol
    if r.lower > 0:
        assert worst_delta(r.lower) >= delta * (1 - 1e-9) - abs_tol


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(eps0=st.floats(0.05, 10.0), n=st.integers(2, 24), log_delta=st.floats(-12, -2))
@example(eps0=0.05, n=24, log_delta=-6.0)
@example(eps0=10.0, n=2, log_delta=-12.0)
def test_default_epsilon_brackets_mpmath_worst_case(eps0, n, log_delta):
    delta = 10.0 ** log_delta
    r = shuffleamp.epsilon(KRR(eps0, 2), n, delta)
    assert r.upper <= eps0
    def worst(e):           # 40 digits: near eps0, delta is a difference of nearly equal terms
        with mpmath.workdps(40):
            return float(_mp_worst_delta(eps0, n, e))
    _check_eps_against(worst, r, delta, 1e-15)
    d = shuffleamp.delta(KRR(eps0, 2), n, 0.5 * r.upper)
    ref = worst(0.5 * r.upper)
    assert d.lower - 1e-15 <= ref <= d.upper + 1e-15


def _worst_float_stable(eps0, n, eps):
    """Float reference for n <= 2000 like ``_worst_float`` (every m, every count, both orderings), with the
    hockey-stick terms in cancellation-free form: P0(c) - e^eps P1(c) = f(c-1) (p0 - e^eps p1)
    + f(c) p0 e^eps expm1(eps0 - eps) (p1 - e^eps p0 = p0 (e^eps0 - e^eps)), so that near eps0 the
    positive terms are not differences of two numbers of size e^eps P1(c)."""
    E = math.exp(eps0)
    p1, p0 = E / (E + 1), 1 / (E + 1)
    N = n - 1
    e = math.exp(eps)
    big = p0 * e * math.expm1(eps0 - eps)          # p1 - e^eps p0, >= 0 for eps <= eps0
    neg = p0 - e * p1                              # < 0
    best = 0.0
    for m in range(N + 1):
        f = np.convolve(binom.pmf(np.arange(m + 1), m, p1), binom.pmf(np.arange(N - m + 1), N - m, p0))
        a, b = np.concatenate(([0.0], f)), np.concatenate((f, [0.0]))
        best = max(best, np.maximum(a * neg + b * big, 0).sum(), np.maximum(a * big + b * neg, 0).sum())
    return best


@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(eps0=st.floats(0.05, 10.0), n=st.integers(31, 250), log_delta=st.floats(-8, -2))
@example(eps0=4.0, n=400, log_delta=-8.0)      # geometric blocks: the search converges on its initial set
@example(eps0=0.06, n=300, log_delta=-10.0)    # the decomposition's upper still runs here
@example(eps0=0.3, n=159, log_delta=-8.0)      # every m exact
@example(eps0=8.0, n=31, log_delta=-7.0)       # near eps0: 1 - p1 must not be formed by cancellation
@example(eps0=9.0, n=31, log_delta=-5.0)
def test_default_epsilon_brackets_float_worst_case(eps0, n, log_delta):
    delta = 10.0 ** log_delta
    r = shuffleamp.epsilon(KRR(eps0, 2), n, delta)
    _check_eps_against(lambda e: _worst_float_stable(eps0, n, e), r, delta, 1e-14)
    for eps in (0.5 * r.upper, r.upper):
        d = shuffleamp.delta(KRR(eps0, 2), n, eps)
        ref = _worst_float_stable(eps0, n, eps)
        # the float reference errs by up to ~2e-14 relative itself (scipy binomial PMFs; see
        # test_certified_delta_band_contains_mpmath_where_the_float_reference_errs)
        tol = 1e-14 + 4e-14 * ref
        assert d.lower - tol <= ref <= d.upper + tol


def test_certified_delta_band_contains_mpmath_where_the_float_reference_errs():
    """eps0 = 7, n = 392, ε = 3.4928011377891113 (hypothesis found it): the float reference gives
    0.6785926619144934, 1.1e-14 above the mpmath value of the worst dataset (m = 0, others all 0);
    the certified band of the default, 2.5e-15 wide, contains the mpmath value."""
    eps0, n, eps = 7.0, 392, 3.4928011377891113
    d = shuffleamp.delta(KRR(eps0, 2), n, eps)
    mpmath.mp.dps = 40
    P0, P1 = _mp_count_laws(eps0, 0, n)
    e = mpmath.e ** mpmath.mpf(eps)
    ref = sum(max(a - e * b, 0) for a, b in zip(P0, P1))
    mpmath.mp.dps = 15
    assert d.lower <= float(ref) <= d.upper and d.upper - d.lower <= 1e-14
    assert abs(float(ref) - 0.678592661914482) <= 1e-15


LARGE_N = [(0.05, 10_000, 1e-6), (1.0, 30_000, 1e-8), (4.0, 10**5, 1e-10),
           (8.0, 20_000, 1e-12),        # near eps0: 1 - p1 must not be formed by cancellation (was 1e-13 above)
           (10.0, 10**5, 1e-4)]


@pytest.mark.parametrize("eps0,n,delta", LARGE_N)
def test_default_large_n_above_mpmath_pairs(eps0, n, delta):
    r = shuffleamp.epsilon(KRR(eps0, 2), n, delta)
    assert 0.0 < r.lower <= r.upper <= eps0
    for m in (0, 1):
        # the upper is certified for every dataset, so for the pairs m = 0, 1 too
        if r.upper < eps0:
            assert _mp_pair_delta(eps0, n, m, r.upper) <= delta * (1 + 1e-9)
        d = shuffleamp.delta(KRR(eps0, 2), n, 0.5 * r.upper)
        assert d.upper >= _mp_pair_delta(eps0, n, m, 0.5 * r.upper) * (1 - 1e-12)
    if r.settings["exact_count"] and r.settings["grid"]["exact_count"]["worst_m"] in (0, 1):
        m = r.settings["grid"]["exact_count"]["worst_m"]
        assert _mp_pair_delta(eps0, n, m, r.lower) >= delta * (1 - 1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("eps0", [0.05, 2.0, 6.0])
@pytest.mark.parametrize("n", [10**6, 10**7])       # mpmath sums over +-16 sd: ~1e4 terms at n = 1e7
def test_default_large_n_above_mpmath_pairs_slow(eps0, n):
    test_default_large_n_above_mpmath_pairs(eps0, n, 1e-8)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(eps0=st.floats(0.05, 10.0), n=st.integers(2, 30), log_delta=st.floats(-12, -2))
def test_default_epsilon_brackets_mpmath_worst_case_slow(eps0, n, log_delta):
    test_default_epsilon_brackets_mpmath_worst_case.hypothesis.inner_test(eps0, n, log_delta)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(eps0=st.floats(0.05, 10.0), n=st.integers(31, 1000), log_delta=st.floats(-8, -2))
def test_default_epsilon_brackets_float_worst_case_slow(eps0, n, log_delta):
    test_default_epsilon_brackets_float_worst_case.hypothesis.inner_test(eps0, n, log_delta)


def test_initial_set_covers_every_m_once():
    from shuffleamp.exact_count import _initial_set
    for N in list(range(0, 200)) + [999, 10**4 + 1, 10**5 - 1, 10**5, 10**6 + 1, 10**9 - 1, 10**9]:
        ms, blocks = _initial_set(N)
        blocks = sorted(blocks)
        assert blocks[0][0] == 0 and blocks[-1][1] == N
        assert all(b1 + 1 == a2 for (_, b1), (a2, _) in zip(blocks[:-1], blocks[1:]))
        assert set(range(min(N, 4) + 1)) <= set(ms) and all((m, m) in blocks for m in range(min(N, 4) + 1))
        # mirror symmetry: [a, b] and [N - b, N - a] are both blocks (one count law serves both)
        assert all((N - b, N - a) in set(blocks) for a, b in blocks)
