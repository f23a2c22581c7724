"""Gradual release of k-RR (Pan, arXiv:2401.13952): kernel, sampler, estimators, local and shuffled accounting.

Statistical checks use tolerances derived from the sample size: chi-square p-values against a
fixed family-wise level, and z-tests with the formula's own standard error (all seeded).
"""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import shuffleamp
from shuffleamp import gradual as g
from shuffleamp.errors import ParameterError
from shuffleamp.mechanisms import KRR

#: Family-wise false-alarm level per statistical assertion (seeded, so deterministic anyway).
ALPHA = 1e-6
Z = stats.norm.isf(ALPHA / 2)


# ---------------------------------------------------------------- oracles written from the paper

def naive_kernel(e1, e2, m):
    """Pan 2024, Eq. (54) verbatim (p_aa, p_ba, p_bb)."""
    E1, E2 = math.exp(e1), math.exp(e2)
    p_aa = E2 / (E2 - 1) - math.exp(e2 - e1) * (E1 + m - 1) / ((E2 - 1) * (E2 + m - 1))
    p_ba = (E2 ** 2 - E1 * E2) / ((E2 - 1) * (E2 + m - 1))
    p_bb = E1 / (E2 - 1) - (E1 + m - 1) / ((E2 - 1) * (E2 + m - 1))
    return p_aa, p_ba, p_bb


def krr_pmf(eps, m, x):
    p = np.full(m, 1.0 / (math.exp(eps) + m - 1))
    p[x] = math.exp(eps) / (math.exp(eps) + m - 1)
    return p


def history_law(x, sched, m):
    """All m^T histories of one user (rows) and their exact probabilities, Eq. (4)."""
    hs = np.array(list(itertools.product(range(m), repeat=len(sched))), dtype=np.int64)
    p = krr_pmf(sched[0], m, x)[hs[:, 0]]
    for t in range(1, len(sched)):
        T = g.transition_matrix(sched[t - 1], sched[t], m, x)
        p = p * T[hs[:, t - 1], hs[:, t]]
    return hs, p


GRID = [0.05, 0.1, 0.5, 1.0, 2.0, 5.0]


# ---------------------------------------------------------------- kernel

@pytest.mark.parametrize("m", [2, 3, 5, 10])
def test_kernel_matches_eq54_and_is_a_kernel(m):
    for e1, e2 in itertools.combinations_with_replacement(GRID, 2):
        ker = g.relax_kernel(e1, e2, m)
        vals = np.array(list(ker))
        assert (vals >= 0).all()
        assert ker.p_ba + ker.p_bb + ker.move_third == pytest.approx(1.0, abs=1e-14)
        if e1 < e2:
            assert np.allclose((ker.p_aa, ker.p_ba, ker.p_bb), naive_kernel(e1, e2, m), rtol=1e-10, atol=1e-12)
        else:
            assert (ker.p_aa, ker.p_ba, ker.p_bb, ker.move_third) == (1.0, 0.0, 1.0, 0.0)
        for x in range(m):
            T = g.transition_matrix(e1, e2, m, x)
            assert np.allclose(T.sum(axis=1), 1.0, atol=1e-14)
            # Theorem 3.3: an eps_1 k-RR report pushed through the kernel is an eps_2 k-RR report
            assert np.allclose(krr_pmf(e1, m, x) @ T, krr_pmf(e2, m, x), atol=1e-14)


def test_binary_kernel_is_theorem_3_1():
    for e1, e2 in [(1.0, 2.0), (0.1, 0.5), (0.3, 0.31)]:
        ker = g.relax_kernel(e1, e2, 2)
        p_a = (math.exp(e2) - math.exp(-e1)) / (math.exp(e2) - math.exp(-e2))      # Eq. (22)
        p_b = (math.exp(e1 + e2) - 1) / (math.exp(2 * e2) - 1)                      # Eq. (23)
        assert ker.p_aa == pytest.approx(p_a, rel=1e-12)
        assert ker.p_bb == pytest.approx(p_b, rel=1e-12)
        assert ker.move_third == 0.0
    ker = g.relax_kernel(1.0, 2.0, 2)
    assert round(ker.p_aa, 5) == 0.96794 and round(ker.p_bb, 5) == 0.35609


def test_kernel_tight_constraints_and_paper_tables():
    for m in (3, 4, 7):
        for e1, e2 in [(0.1, 0.5), (0.5, 1.0), (1.0, 2.0)]:
            k = g.relax_kernel(e1, e2, m)
            assert math.exp(e1) * k.p_aa == pytest.approx(math.exp(e2) * k.p_bb, rel=1e-12)      # (37)
            assert k.p_ba == pytest.approx(math.exp(e1 + e2) * k.move_correct / (m - 1), rel=1e-12)  # (42)
            assert k.move_third / (m - 2) == pytest.approx(math.exp(-e2) * k.p_ba, rel=1e-12)   # (45)
    # Tables I-III (p_aa, p_bb, p_ba), rows m = 3 and m = 10, columns 0.1->0.5, 0.5->1, 1->2, 2->10
    steps = [(0.1, 0.5), (0.5, 1.0), (1.0, 2.0), (2.0, 10.0)]
    table = {3: ([0.584, 0.840, 0.943, 1.000], [0.392, 0.509, 0.347, 0.000], [0.379, 0.359, 0.575, 1.000]),
             10: ([0.359, 0.710, 0.852, 1.000], [0.241, 0.431, 0.314, 0.000], [0.130, 0.144, 0.330, 0.999])}
    for m, (taa, tbb, tba) in table.items():
        for j, (e1, e2) in enumerate(steps):
            k = g.relax_kernel(e1, e2, m)
            assert (round(k.p_aa, 3), round(k.p_bb, 3), round(k.p_ba, 3)) == (taa[j], tbb[j], tba[j])


def test_kernel_stable_at_tiny_and_large_eps():
    # eps ~ 1e-9: p_ba -> (e2-e1)/(m e2), move_correct -> (m-1)(e2-e1)/(m e2),
    # p_bb -> (e2 + (m-1) e1)/(m e2), move_third -> (m-2)(e2-e1)/(m e2)
    k = g.relax_kernel(1e-9, 2e-9, 3)
    assert k.p_ba == pytest.approx(1 / 6, rel=1e-6)
    assert k.move_correct == pytest.approx(1 / 3, rel=1e-6)
    assert k.p_bb == pytest.approx(2 / 3, rel=1e-6)
    assert k.move_third == pytest.approx(1 / 6, rel=1e-6)
    assert 0 <= k.move_third <= 1 and abs(k.p_ba + k.p_bb + k.move_third - 1) < 1e-15
    big = g.relax_kernel(0.1, 700.0, 3)
    assert all(np.isfinite(list(big))) and big.p_ba == pytest.approx(1.0) and big.move_correct < 1e-300


# ---------------------------------------------------------------- sampler by simulation

def chi2_pvalue(counts, probs):
    counts = np.asarray(counts, dtype=float).ravel()
    probs = np.asarray(probs, dtype=float).ravel()
    keep = probs > 0
    assert counts[~keep].sum() == 0
    expected = counts.sum() * probs[keep]
    stat = ((counts[keep] - expected) ** 2 / expected).sum()
    return stats.chi2.sf(stat, keep.sum() - 1)


@pytest.mark.parametrize("m", [2, 3, 5])
def test_sampler_marginals_and_pairs_are_exact(m):
    sched = [0.2, 0.6, 0.6, 1.5]
    per_value = 60_000
    x = np.repeat(np.arange(m), per_value)
    h = g.sample_history(x, sched, m, np.random.default_rng(1000 + m))
    assert h.shape == (len(sched), x.size) and h.dtype == np.int64
    assert (h[2] == h[1]).all()          # equal eps: the report is never re-randomised
    n_tests = m * (2 * len(sched) - 1)
    for v in range(m):
        rows = h[:, x == v]
        for t, e in enumerate(sched):
            # marginal of round t is exactly a fresh eps_t k-RR report of v
            counts = np.bincount(rows[t], minlength=m)
            assert chi2_pvalue(counts, krr_pmf(e, m, v)) > ALPHA / n_tests
            if t:
                # joint law of consecutive rounds: eps_{t-1} k-RR times the kernel
                joint = krr_pmf(sched[t - 1], m, v)[:, None] * g.transition_matrix(sched[t - 1], e, m, v)
                pair = np.bincount(rows[t - 1] * m + rows[t], minlength=m * m)
                assert chi2_pvalue(pair, joint) > ALPHA / n_tests


def test_relax_per_user_eps_and_fresh_krr():
    rng = np.random.default_rng(7)
    n = 200_000
    x = rng.integers(0, 4, n)
    eps1 = np.where(np.arange(n) % 2 == 0, 0.3, 0.8)
    o1 = g.sample_krr(x, eps1, 4, rng)
    o2 = g.relax(x, o1, eps1, 1.2, 4, rng)
    for part in (0, 1):
        sel = np.arange(n) % 2 == part
        for name, o, e in (("o1", o1, eps1[sel][0]), ("o2", o2, 1.2)):
            hit = (o[sel] == x[sel]).mean()
            p = math.exp(e) / (math.exp(e) + 3)
            assert abs(hit - p) <= Z * math.sqrt(p * (1 - p) / sel.sum()), name
    same = g.relax(x, o2, 1.2, 1.2, 4, rng)
    assert (same == o2).all()
    a = g.sample_history(x[:50], [0.5, 1.0], 4, 3)
    b = g.sample_history(x[:50], [0.5, 1.0], 4, np.random.default_rng(3))
    assert (a == b).all()


# ---------------------------------------------------------------- estimators by simulation

def _check_estimator(reps_est, f, eps, n, n_checks):
    mean = reps_est.mean(axis=0)
    R = reps_est.shape[0]
    var_theory = g.frequency_variance(f, eps, n)
    # bias: z-test with the formula's own standard error
    assert (np.abs(mean - f) <= Z * np.sqrt(var_theory / R)).all(), (mean, f)
    # variance: empirical variance vs formula; SE of the sample variance from the sample's 4th moment
    dev = reps_est - mean
    s2 = (dev ** 2).sum(axis=0) / (R - 1)
    se = np.sqrt(((dev ** 4).mean(axis=0) - s2 ** 2) / R)
    z = stats.norm.isf(ALPHA / (2 * n_checks))
    assert (np.abs(s2 - var_theory) <= z * se).all(), (s2, var_theory)


def test_estimators_on_relaxed_rounds_binary():
    counts = np.array([400, 600])                         # 400 zeros, 600 ones (Pan 2024, Sec. 6.1)
    f = counts / counts.sum()
    R, n = 1500, counts.sum()
    sched = [0.2273, 0.6048, 0.9843]
    x = np.tile(np.repeat(np.arange(2), counts), R)
    h = g.sample_history(x, sched, 2, np.random.default_rng(11))
    for t, e in enumerate(sched):
        est = g.estimate_frequencies(h[t].reshape(R, n), e, 2)
        # Eq. (6): pi_1 = ((e^eps+1) lambda_1 - 1)/(e^eps - 1)
        lam = (h[t].reshape(R, n) == 1).mean(axis=1)
        assert np.allclose(est[:, 1], ((math.exp(e) + 1) * lam - 1) / math.expm1(e), atol=1e-12)
        # Eq. (67)
        assert g.frequency_variance(f, e, n)[1] == pytest.approx(math.exp(e) / (n * math.expm1(e) ** 2), rel=1e-12)
        _check_estimator(est, f, e, n, 2 * len(sched))


def test_estimators_on_relaxed_rounds_5ary():
    counts = np.array([100, 200, 300, 400, 500])
    f = counts / counts.sum()
    R, n = 800, counts.sum()
    sched = [0.1, 0.5, 1.0]
    x = np.tile(np.repeat(np.arange(5), counts), R)
    h = g.sample_history(x, sched, 5, np.random.default_rng(12))
    for t, e in enumerate(sched):
        est = g.estimate_frequencies(h[t].reshape(R, n), e, 5)
        assert np.allclose(est.sum(axis=1), 1.0)
        _check_estimator(est, f, e, n, 5 * len(sched))
    # closed-form per-value variance and the inverse-matrix estimator (Eqs. (7)-(8))
    E = math.e
    closed = (f * E * 4 + (1 - f) * (E + 3)) / (n * (E - 1) ** 2)
    assert np.allclose(g.frequency_variance(f, 1.0, n), closed, rtol=1e-12)
    P = np.array([krr_pmf(1.0, 5, j) for j in range(5)]).T
    lam = np.bincount(h[2][:n], minlength=5) / n
    assert np.allclose(g.estimate_frequencies(h[2][:n], 1.0, 5), np.linalg.solve(P, lam), atol=1e-12)
    cov = g.frequency_covariance(f, 1.0, n)
    assert np.allclose(cov, cov.T) and abs(cov.sum()) < 1e-15      # estimates sum to 1 exactly


def test_mle_is_last_output_and_bayes_error():
    sched = [0.1, 0.4, 1.0]
    m, per = 3, 40_000
    x = np.repeat(np.arange(m), per)
    h = g.sample_history(x, sched, m, np.random.default_rng(5))
    ll = g.history_log_likelihood(h, sched, m)
    assert (ll.argmax(axis=1) == h[-1]).all()
    # Lemma 3.1: log-likelihood differences equal those of the last report alone
    last = np.log(np.array([krr_pmf(sched[-1], m, v) for v in range(m)]))[:, h[-1]].T
    assert np.allclose(ll - ll[:, :1], last - last[:, :1], atol=1e-12)
    err = (h[-1] != x).mean()
    b = g.bayes_error(sched[-1], m)
    assert b == pytest.approx(2 / (math.e + 2))
    assert abs(err - b) <= Z * math.sqrt(b * (1 - b) / x.size)


# ---------------------------------------------------------------- local accounting (exact)

@pytest.mark.parametrize("m", [2, 3])
@pytest.mark.parametrize("sched", [(0.3, 1.1), (0.2, 0.2, 0.9), (0.4, 0.7, 1.3)])
def test_local_epsilon_exact_enumeration(m, sched):
    laws = [history_law(x, sched, m) for x in range(m)]
    hs = laws[0][0]
    P = np.array([p for _, p in laws])                      # P[x, history]
    assert np.allclose(P.sum(axis=1), 1.0, atol=1e-14)
    # equal consecutive eps never re-randomise: those histories are impossible under every value
    possible = P.max(axis=0) > 0
    assert (P[:, ~possible] == 0).all() and (P[:, possible] > 0).all()
    hs, P = hs[possible], P[:, possible]
    logP = np.log(P)
    worst = max((logP[a] - logP[b]).max() for a in range(m) for b in range(m))
    assert abs(worst - g.local_epsilon(sched)) <= 1e-12
    # Lemma 3.1 identity for every history, and the marginals of Theorem 3.4
    for a, b in itertools.permutations(range(m), 2):
        ratio_last = np.log(krr_pmf(sched[-1], m, a) / krr_pmf(sched[-1], m, b))[hs[:, -1]]
        assert np.allclose(logP[a] - logP[b], ratio_last, atol=1e-12)
    for x in range(m):
        for t, e in enumerate(sched):
            assert np.allclose(np.bincount(hs[:, t], weights=P[x], minlength=m), krr_pmf(e, m, x), atol=1e-14)
    assert g.GradualRelease(m, sched).local_epsilon() == sched[-1]
    assert sum(sched) > sched[-1]


# ---------------------------------------------------------------- shuffled accounting (brute force)

def shuffled_law(dataset, sched, m, n, view):
    """Exact law of the shuffled output as (sorted state codes, probabilities).

    view="sep": the tuple of per-round multisets; "tuple": the multiset of whole histories;
    "last": the multiset of the last round only.  A multiset is a histogram, coded in base n+1."""
    base = n + 1
    states = np.zeros(1, dtype=np.int64)
    probs = np.ones(1)
    for x in dataset:
        hs, p = history_law(x, sched, m)
        T = len(sched)
        if view == "sep":
            incr = sum(base ** (t * m + hs[:, t]) for t in range(T))
        elif view == "tuple":
            incr = base ** np.arange(len(hs), dtype=np.int64)
        else:
            incr = base ** hs[:, -1]
        cand = (states[:, None] + incr[None, :]).ravel()
        w = (probs[:, None] * p[None, :]).ravel()
        states, inv = np.unique(cand, return_inverse=True)
        probs = np.bincount(inv.ravel(), weights=w)
    return states, probs


def hockey(P, Q, eps):
    (sp, pp), (sq, pq) = P, Q
    assert np.array_equal(sp, sq)          # full support on both sides
    return np.maximum(pp - math.exp(eps) * pq, 0.0).sum()


EPS_GRID = [0.0, 0.1, 0.3, 0.6]


@pytest.mark.parametrize("m,sched,n", [(2, (0.5, 1.0), 6), (2, (0.3, 0.7, 1.2), 6), (2, (0.4, 0.4, 1.0), 5),
                                       (3, (0.5, 1.0), 5), (3, (0.3, 0.7, 1.2), 5), (3, (0.3, 0.7, 1.2), 4)])
def test_shuffled_history_equals_one_final_round_and_obeys_bound(m, sched, n):
    gr = g.GradualRelease(m, sched)
    upper = {e: gr.delta(n, e).upper for e in EPS_GRID}
    lower = {e: gr.delta(n, e).lower for e in EPS_GRID}
    worst = {e: 0.0 for e in EPS_GRID}
    tuple_ok = (n + 1) ** (m ** len(sched)) < 2 ** 63      # codes fit in int64
    for rest in itertools.combinations_with_replacement(range(m), n - 1):
        d0, d1 = (0,) + rest, (1,) + rest
        laws = {v: (shuffled_law(d0, sched, m, n, v), shuffled_law(d1, sched, m, n, v))
                for v in (("sep", "last", "tuple") if tuple_ok else ("sep", "last"))}
        for e in EPS_GRID:
            for P, Q in ((0, 1), (1, 0)):
                sep = hockey(laws["sep"][P], laws["sep"][Q], e)
                last = hockey(laws["last"][P], laws["last"][Q], e)
                # derived: separately shuffled rounds have exactly the profile of the last round
                assert sep == pytest.approx(last, rel=1e-9, abs=1e-14)
                if tuple_ok:
                    assert hockey(laws["tuple"][P], laws["tuple"][Q], e) == pytest.approx(last, rel=1e-9, abs=1e-14)
                assert sep <= upper[e] + 1e-12
                worst[e] = max(worst[e], sep)
    assert worst[0.0] > 0.01                 # not vacuous
    for e in EPS_GRID:
        # the certified lower bound is a concrete pair's exact divergence: reached by the enumeration
        assert worst[e] >= lower[e] * (1 - 1e-6) - 1e-14
        assert worst[e] <= upper[e] + 1e-12


def test_gradual_release_api_and_fresh_comparison():
    gr = g.GradualRelease(k=3, schedule=[0.5, 1.0, 2.0])
    assert gr.schedule == (0.5, 1.0, 2.0) and gr.rounds == 3
    assert gr.final_mechanism() == KRR(2.0, 3)
    r = gr.epsilon(10_000, 1e-8)
    ref = shuffleamp.epsilon(KRR(2.0, 3), 10_000, 1e-8)
    assert (r.upper, r.lower) == (ref.upper, ref.lower)
    assert gr.delta(1000, 0.5).upper == shuffleamp.delta(KRR(2.0, 3), 1000, 0.5).upper
    fresh = gr.fresh_rounds_epsilon(10_000, 1e-8)
    assert r.upper < fresh
    assert fresh >= shuffleamp.epsilon(KRR(2.0, 3), 10_000, 1e-8 / 3).upper
    with pytest.raises(Exception):
        gr.k = 4          # frozen


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("call,param", [
    (lambda: g.sample_history([0, 1], [1.0, 0.5], 2), "schedule"),
    (lambda: g.sample_history([0, 1], [0.0, 0.5], 2), "schedule"),
    (lambda: g.sample_history([0, 1], [-1.0], 2), "schedule"),
    (lambda: g.sample_history([0, 1], [0.5, float("nan")], 2), "schedule"),
    (lambda: g.sample_history([0, 1], [], 2), "schedule"),
    (lambda: g.sample_history([0, 1], [0.5], 1), "k"),
    (lambda: g.sample_history([0, 2], [0.5], 2), "values"),
    (lambda: g.sample_history([0, -1], [0.5], 2), "values"),
    (lambda: g.sample_history([0.5, 1], [0.5], 2), "values"),
    (lambda: g.sample_history([[0, 1]], [0.5], 2), "values"),
    (lambda: g.relax([0, 1], [0, 3], 0.5, 1.0, 3), "previous"),
    (lambda: g.relax([0, 1], [0, 1, 1], 0.5, 1.0, 3), "previous"),
    (lambda: g.relax([0, 1], [0, 1], 1.0, 0.5, 3), "eps_new"),
    (lambda: g.relax([0, 1], [0, 1], 0.0, 0.5, 3), "eps_prev"),
    (lambda: g.relax([0, 1], [0, 1], 0.5, float("nan"), 3), "eps_new"),
    (lambda: g.relax([0, 1], [0, 1], [0.5, 0.5, 0.5], 1.0, 3), "eps_prev"),
    (lambda: g.relax([0, 1], [0, 1], 0.5, 1.0, 3, rng="seed"), "rng"),
    (lambda: g.sample_krr([0, 1], 0.0, 2), "eps"),
    (lambda: g.relax_kernel(1.0, 0.5, 2), "eps_new"),
    (lambda: g.relax_kernel(0.5, 1.0, 1), "k"),
    (lambda: g.transition_matrix(0.5, 1.0, 3, 3), "x"),
    (lambda: g.local_epsilon([2.0, 1.0]), "schedule"),
    (lambda: g.history_log_likelihood([[0, 1]], [0.5, 1.0], 2), "history"),
    (lambda: g.estimate_frequencies([0, 5], 1.0, 3), "reports"),
    (lambda: g.frequency_variance([0.5, 0.6], 1.0, 10), "frequencies"),
    (lambda: g.frequency_variance([0.5, 0.5], 1.0, 0), "n"),
    (lambda: g.bayes_error(float("nan"), 2), "eps"),
    (lambda: g.GradualRelease(3, [1.0, 0.5]), "schedule"),
    (lambda: g.GradualRelease(1, [0.5]), "k"),
    (lambda: g.GradualRelease(2, [0.5]).fresh_rounds_epsilon(100, 1.5), "delta"),
])
def test_bad_input_names_the_parameter(call, param):
    with pytest.raises(ParameterError) as info:
        call()
    assert info.value.parameter == param
