"""Gaussian populations: truncation rungs, the homogeneous reduction and the windowed threshold-count lower bound.

Independent checks: the n = 2, 3 integration oracle lives in ``test_gaussian_population_oracle.py``; here the
threshold-count lower bound against exact rational binomial sums (mpmath, nothing from the library), and
properties every certified bracket must have (monotone in δ, ε and in the other users; lower <= upper).
"""

import math

import mpmath
import numpy as np
import pytest

import shuffleamp as sa
from shuffleamp import gaussian as G
from shuffleamp import personalized as P


def _pop(sigmas, counts, D=1.0):
    return sa.population([(sa.Gaussian(sigma=s, sensitivity=D), c) for s, c in zip(sigmas, counts)])


def test_one_group_matches_single_round_epsilon():
    """One group: the population's rungs reach the single round's certified ε (same law, same rung grid)."""
    c = math.sqrt(2 * math.log(1.25e5))
    g = sa.Gaussian(sigma=c / 0.5, sensitivity=1.0)
    one = sa.epsilon(sa.population([(g, 100)]), delta=1e-5)
    ref = sa.epsilon(g, 100, 1e-5)
    assert one.upper <= ref.upper * (1 + 1e-6)
    assert one.lower == pytest.approx(ref.lower, rel=1e-6)
    assert one.lower <= one.upper


@pytest.mark.parametrize("sigmas,counts,eps", [((0.5, 1.0), (40, 40), 2.0), ((0.3, 0.6), (500, 500), 8.0),
                                               ((2.0, 3.0), (300, 200), 0.1)])
def test_rungs_and_reduction_are_each_certified(sigmas, counts, eps):
    """Every rung's value plus its charge is an upper bound, so each is >= the certified lower bound, and the
    reported upper is their minimum (with the local profile).  The target is in the group of the widest σ (a
    narrower target's rungs give way to the cross blanket of a wider group)."""
    pop = _pop(sigmas, counts)
    g = int(np.argmax(sigmas))
    lo, _ = P._delta_lower(pop, g, eps)
    up, info = P._delta_target(pop, g, eps, 1e-5)
    assert lo <= up
    assert info["rungs"]
    for r in info["rungs"]:
        assert r["upper"] >= lo
        assert up <= r["upper"]
    assert up <= G._local_delta(pop.groups[g].mechanism.mu, eps)


def test_homogeneous_reduction_not_below_mixture():
    """Counting every other user at the smallest blanket mass (Theorem 13) is a coarser instance of the same
    bound: in exact arithmetic it is >= the heterogeneous mixture.  Both evaluations certified and tight here."""
    mu = 1.0
    a, b, c, tau = G._population_rung(mu, 6.0, None)
    gt = 2 * G._sf(mu / 2)
    e = math.exp(0.05)
    vals, mass = gt * (a - e * b) / c, c / gt
    gam = np.array([0.5 * gt, gt])
    N = np.array([3000.0, 2999.0])
    mix, i_mix = P._delta_law(vals, mass, gam, N, 1e-7, None)
    hom, i_hom = P._delta_law(vals, mass, gam[:1], np.array([N.sum()]), 1e-7, None)
    assert i_mix["charged"] < 1e-3 * mix and i_hom["charged"] < 1e-3 * hom
    assert hom >= mix * (1 - 1e-9)


def test_monotone_in_delta_and_epsilon():
    pop = _pop((0.5, 1.0), (20, 20))
    ups = [sa.epsilon(pop, delta=d).groups[0].upper for d in (1e-7, 1e-4)]
    assert all(x >= y for x, y in zip(ups, ups[1:]))
    ds = [sa.delta(pop, epsilon=e).groups[0].upper for e in (0.5, 1.0, 2.0, 4.0)]
    assert all(x >= y for x, y in zip(ds, ds[1:]))


def test_more_blanket_users_do_not_raise_the_bound():
    """Adding users of a larger σ (a positive blanket mass for the target) can only lower the target's bound
    (the blanket count grows stochastically; a user whose report is independent of the target is a
    post-processing)."""
    base = sa.epsilon(_pop((0.5,), (100,)), delta=1e-6).groups[0].upper
    more = sa.epsilon(_pop((0.5, 0.8), (100, 100)), delta=1e-6).groups[0].upper
    assert more <= base * (1 + 1e-6)


def _threshold_count_laws(t, D, st, others):
    """(P0, P1): the exact laws (mpmath, 40 digits) of the count of reports above t when the target (noise σ =
    ``st``) is at 0 or at Δ and every other user is at Δ (others: [(σ, count)]), by exact binomial sums."""
    mpmath.mp.dps = 40

    def sf(x):
        return mpmath.ncdf(-x)
    law = [mpmath.mpf(1)]
    for sig, m in others:
        p = sf(mpmath.mpf(t - D) / sig)
        pm = [mpmath.binomial(m, k) * p ** k * (1 - p) ** (m - k) for k in range(m + 1)]
        new = [mpmath.mpf(0)] * (len(law) + m)
        for i, x in enumerate(law):
            for j, y in enumerate(pm):
                new[i + j] += x * y
        law = new
    p0, p1 = sf(mpmath.mpf(t) / st), sf(mpmath.mpf(t - D) / st)
    return tuple([(1 - p) * (law[c] if c < len(law) else 0) + p * (law[c - 1] if c >= 1 else 0)
                  for c in range(len(law) + 1)] for p in (p0, p1))


def _threshold_oracle(eps, t, D, st, others):
    """max over both orderings of sum_c (P0(c) - e^eps P1(c))_+ for the count of reports above t, with exact
    binomial sums in mpmath (others: [(σ, count)], every other user at Δ, the target at 0 vs Δ)."""
    P0, P1 = _threshold_count_laws(t, D, st, others)
    e = mpmath.exp(eps)
    return max(sum(max(x - e * y, 0) for x, y in zip(A, B)) for A, B in ((P0, P1), (P1, P0)))


@pytest.mark.parametrize("eps", [0.5, 3.0, 9.0])
def test_threshold_lower_against_exact_binomial_sums(eps):
    """The windowed threshold-count lower bound is at most the exact divergence of the best threshold it tried,
    and within rounding of it (relative margins: also at large e^ε, where an absolute FFT margin was useless)."""
    sig, cnt, D = (0.4, 0.7), (6, 7), 1.0
    pop = _pop(sig, cnt, D)
    lo, how = G.population_delta_lower(pop, 0, eps, both=True)
    n = sum(cnt)
    sc = round(G.critical_cut(D / sig[0], n, eps) / G.LR_CUT_ROUND) * G.LR_CUT_ROUND
    cuts = sorted(set(G.THRESHOLDS) | {sc + k * G.LR_FINE_HALF for k in (-1, 0, 1)})
    exact = max(float(_threshold_oracle(eps, D / 2 + s * sig[0], D, sig[0], [(sig[0], cnt[0] - 1), (sig[1], cnt[1])]))
                for s in cuts)
    assert lo <= exact
    # the margins are relative to P0 + e^ε P1 (cancellation near the threshold of the positive part)
    assert lo >= exact * (1 - 1e-6) - 1e-300


def test_large_epsilon_lower_not_lost_to_rounding():
    """At e^ε ~ 1e6 the threshold-count lower bound stays positive (an absolute FFT margin of 1e-13 per entry,
    times e^ε, would erase it: 2.4e-4 here, against a divergence of about 4e-7)."""
    pop = _pop((0.3,), (2000,))
    lo, _ = G.population_delta_lower(pop, 0, 14.0)
    up, _ = P._delta_target(pop, 0, 14.0, 1e-5)
    assert 0 < lo <= up


def test_accountant_threshold_pair_is_dominated():
    """The accountant's concrete pair of a Gaussian population: U <= P^0 and L >= P^1 entrywise against the
    exact rational law (mpmath) of the chosen threshold count, in both directions (below Δ/2 the count of the reports
    below the threshold, n minus the count above)."""
    pop = _pop((0.4, 0.7), (6, 7))
    for rev in (False, True):
        U, L = G.population_threshold_pair(pop, 0, reverse=rev)
        tv_best, exact = -1.0, None
        for s in G.THRESHOLDS:
            P0, P1, *_ = G._threshold_pair(pop, 0, s)
            tv = float(np.maximum(P0 - P1, 0).sum())
            if tv > tv_best:
                tv_best, exact = tv, s
        t = 0.5 + exact * 0.4
        full = _threshold_count_laws(t, 1.0, 0.4, ((0.4, 5), (0.7, 7)))
        if exact < 0:     # below Δ/2 the library counts the reports below t: n minus the count above
            full = tuple(list(reversed(f)) for f in full)
        A, B = (full[1], full[0]) if rev else (full[0], full[1])
        assert all(u <= a for u, a in zip(U, A)) and all(l_ >= b for l_, b in zip(L, B))


def test_accountant_refuses_a_costly_gaussian_population_up_front(monkeypatch):
    """The accountant's profiles of Gaussian groups cost about 3.5 s of CPU for two groups of 50 users (estimate
    3.6 s): over a budget of 1 s it is refused by the estimate, before any profile is evaluated."""
    def boom(*a, **k):
        raise AssertionError("a profile was evaluated before the refusal")
    monkeypatch.setattr(P, "_delta_target", boom)
    from shuffleamp.errors import ResourceLimitError
    with pytest.raises(ResourceLimitError) as e:
        sa.compose_rounds([(_pop((1.0, 2.0), (50, 50)), None, 3)], delta=1e-6, max_seconds=1.0)
    assert e.value.parameter in ("groups", "rounds")
