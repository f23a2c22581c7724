"""Populations: everyone at the largest ε0 (mixture identity) and the exact count law of binary RR.

Oracles: enumeration of every dataset and of the shuffled histogram law of independent users with
different randomizers (no blanket, no count reduction).
"""
import itertools
import math

import numpy as np
import pytest

import shuffleamp as sa
from shuffleamp import exact_count
from shuffleamp import personalized as P
from shuffleamp.mechanisms import KRR

from oracle import heterogeneous_divergence as _divergence
from oracle import heterogeneous_histogram_law as _histogram_law


def _worst(mats, counts, g, eps):
    """Max over every dataset of the other users (all inputs) and every ordered target pair."""
    others = [M for i, (M, c) in enumerate(zip(mats, counts)) for _ in range(c - (1 if i == g else 0))]
    D = mats[g].shape[0]
    best = 0.0
    for xs in itertools.product(range(D), repeat=len(others)):
        rows = [M[x] for M, x in zip(others, xs)]
        for x0, x1 in itertools.permutations(range(D), 2):
            best = max(best, _divergence([mats[g][x0]] + rows, [mats[g][x1]] + rows, eps))
    return best


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("ea,eb", [(0.1, 1.0), (0.7, 0.8), (1.5, 3.0)])
def test_krr_mixture_identity(k, ea, eb):
    """k-RR at ε_a <= ε_b is λ·(k-RR at ε_b) + (1 - λ)·uniform, with λ = mixture_weight (up to its rounding)."""
    pop = sa.population([(KRR(ea, k), 3), (KRR(eb, k), 3)])
    lam = P.mixture_weight(pop, 0)
    assert 0.0 < lam < 1.0 and P.mixture_weight(pop, 1) == 1.0
    mix = lam * KRR(eb, k).matrix() + (1.0 - lam) / k
    np.testing.assert_allclose(mix, KRR(ea, k).matrix(), rtol=1e-13)


@pytest.mark.parametrize("eps0s,counts,k", [((0.5, 1.5), (2, 3), 2), ((0.3, 1.0, 2.0), (2, 2, 2), 2),
                                            ((0.5, 2.0), (2, 2), 3)])
def test_mixture_bound_against_enumeration(eps0s, counts, k):
    """True worst δ of every group <= λ_g × true worst δ of everyone at the largest ε0 (both enumerated)."""
    pop = sa.population([(KRR(e, k), c) for e, c in zip(eps0s, counts)])
    mats = [KRR(e, k).matrix() for e in eps0s]
    n, top = sum(counts), KRR(max(eps0s), k).matrix()
    for eps in (0.0, 0.2, 0.7):
        hom = _worst([top], [n], 0, eps)
        for g in range(len(counts)):
            true = _worst(mats, counts, g, eps)
            assert true <= P.mixture_weight(pop, g) * hom * (1 + 1e-12) + 1e-15
        r = P.delta(pop, eps)
        for g, gr in enumerate(r.groups):
            true = _worst(mats, counts, g, eps)
            assert gr.lower <= true * (1 + 1e-9) + 1e-15 and true <= gr.upper * (1 + 1e-12) + 1e-15


def test_count_laws_match_histogram_law():
    """The Poisson-binomial count law of a concrete dataset equals the enumerated histogram law."""
    eps0s, counts = (0.4, 1.2, 2.5), (2, 3, 2)
    pop = sa.population([(KRR(e, 2), c) for e, c in zip(eps0s, counts)])
    mats = [KRR(e, 2).matrix() for e in eps0s]
    g, ones = 1, (1, 0, 2)
    rows = []
    for i, (M, c) in enumerate(zip(mats, counts)):
        N = c - (1 if i == g else 0)
        rows += [M[1]] * ones[i] + [M[0]] * (N - ones[i])
    P0, P1, rel = P.count_laws(pop, g, ones)
    for x, law_c in ((0, P0), (1, P1)):
        law = _histogram_law([mats[g][x]] + rows)
        ref = np.array([law.get((sum(counts) - c, c), 0.0) for c in range(sum(counts) + 1)])
        np.testing.assert_allclose(law_c, ref, rtol=1e-12, atol=1e-17)
    assert rel < 1e-10


@pytest.mark.parametrize("eps0s,counts", [((1.0, 2.0), (4, 3)), ((0.3, 0.9, 1.6), (2, 3, 2))])
def test_exact_count_population_against_enumeration(eps0s, counts):
    """delta_binary_rr_population brackets the worst case over every dataset to 1e-9."""
    pop = sa.population([(KRR(e, 2), c) for e, c in zip(eps0s, counts)])
    mats = [KRR(e, 2).matrix() for e in eps0s]
    for eps in (0.0, 0.25, 0.8):
        res = P.delta_binary_rr_population(pop, eps)
        for g, (up, lo, ones) in enumerate(res):
            true = _worst(mats, counts, g, eps)
            assert lo <= true * (1 + 1e-12) and true <= up * (1 + 1e-12)
            assert up - lo <= 1e-9 * max(true, 1e-12)
            assert len(ones) == len(counts)


def test_small_binary_population_is_exact():
    """A small binary-RR population's ε bracket is the exhaustive count law's: upper/lower - 1 <= 1e-6."""
    pop = sa.population([(KRR(e, 2), 6) for e in (0.4, 0.9, 1.4)])
    r = sa.epsilon(pop, delta=1e-3)
    for gr in r.groups:
        assert gr.lower <= gr.upper <= gr.lower * (1 + 1e-6) + 1e-12
    assert "exact count" in r.groups[r.worst].settings["upper_source"]


def test_binary_population_at_most_everyone_at_max_exact_count():
    """Every group's upper is at most λ_g-scaled everyone-at-max computed with the exact count law."""
    eps0s = (0.2, 0.5, 0.8, 1.0)
    pop = sa.population([(KRR(e, 2), 20_000) for e in eps0s])
    delta = 1e-5
    r = sa.epsilon(pop, delta=delta)
    ref = exact_count.epsilon_binary_rr(1.0, pop.n, delta).upper
    assert r.upper <= ref
    for gr in r.groups:
        assert 0.0 < gr.lower <= gr.upper
    rd = sa.delta(pop, epsilon=0.02)
    refd = exact_count.delta_binary_rr(1.0, pop.n, 0.02).upper
    for g, gr in enumerate(rd.groups):
        assert gr.upper <= P.mixture_weight(pop, g) * refd * (1 + 1e-12)


def test_krr_population_at_most_everyone_at_max_bound():
    """k >= 3: the worst group's upper is at most the ordinary bound at the largest ε0 with the total n."""
    pop = sa.population([(KRR(e, 4), 3000) for e in (0.5, 1.0, 1.1)])
    r = sa.epsilon(pop, delta=1e-6)
    ref = sa.epsilon(KRR(1.1, 4), pop.n, delta=1e-6).upper
    assert r.upper <= ref and r.lower <= r.upper


@pytest.mark.slow
def test_twenty_group_binary_population():
    """The 20-group population (ε0 at the midpoints of U[0.05, 1], 5000 users each, δ = 1e-5)."""
    eps0s = 0.05 + (np.arange(20) + 0.5) * 0.95 / 20
    pop = sa.population([(KRR(float(e), 2), 5000) for e in eps0s])
    r = sa.epsilon(pop, delta=1e-5)
    assert r.upper <= 0.0076937
    assert r.lower <= r.upper


def test_binary_lower_datasets_are_exact_count_laws():
    """Every dataset of the binary-RR lower bound evaluates to the exact divergence of some dataset (count
    laws of every dataset enumerated), and the lower bound never exceeds the exact worst case."""
    pop = sa.population([(KRR(e, 2), c) for e, c in ((0.3, 5), (0.8, 4), (1.2, 5))])
    eps = 0.15
    exact = P.delta_binary_rr_population(pop, eps)
    for g in range(3):
        P._delta_lower(pop, g, eps)
        Ns = [gr.n - (g == i) for i, gr in enumerate(pop.groups)]
        vals = np.array([P._count_divergence(*P.count_laws(pop, g, ones), eps)[1]
                         for ones in itertools.product(*(range(N + 1) for N in Ns))])
        laws = pop.__dict__["_lower_cache"][g]
        assert len(laws) > 2
        for sc, law in laws:
            v = P._score_delta(sc, law, eps)
            assert np.min(np.abs(vals - v)) <= 1e-9 * v + 1e-14, sc.label
            assert v <= exact[g][0] * (1 + 1e-12)


def test_binary_population_profile_at_most_everyone_at_max():
    """The accountant's per-group upper profile is at most λ_g times the exact count-law profile of everyone
    at the largest ε0, and at least the enumerated worst case at small n."""
    eps0s, counts = (0.3, 1.0), (3, 3)
    pop = sa.population([(KRR(e, 2), c) for e, c in zip(eps0s, counts)])
    eps = np.array([0.0, 0.1, 0.4, 0.9])
    prof = P.group_profiles(pop, eps, "upper")
    ref = exact_count.profile_binary_rr(1.0, pop.n, eps)[0]
    mats = [KRR(e, 2).matrix() for e in eps0s]
    for g in range(2):
        assert np.all(prof[g] <= P.mixture_weight(pop, g) * ref * (1 + 1e-12) + 1e-300)
        for e, u in zip(eps, prof[g]):
            assert _worst(mats, counts, g, float(e)) <= u * (1 + 1e-12) + 1e-15
