"""Gaussian randomizer and (eps0, delta0)-LDP worst case against independent computations.

Oracles (all here, none from the library's evaluators):
* the exact divergence of the shuffled Gaussian pair for n = 2, 3 by numerical integration of the
  permutation-mixture output densities on a grid (two step sizes: their difference bounds the error);
* the threshold-count divergence from scipy's binomial pmf;
* the analytic Gaussian mechanism's epsilon (Balle, Wang, ICML 2018, Theorem 8) by brentq;
* the stop-loss transforms of the blanket GPARV for interior input pairs by quadrature.
"""

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import binom, norm

import shuffleamp as sa
from shuffleamp import gaussian as G
from shuffleamp.errors import ParameterError
from shuffleamp.mechanisms import KRR


# ---------------------------------------------------------------------------- oracles
#: compose_rounds' time budget in these tests: generous (they test values, not the budget; a loaded
#: machine's wall clock can be several times the CPU time)
TOTAL_SECONDS = 300.0


def shuffled_divergence(mu, eps, x0, x1, others, h, half_width=9.0):
    """∫ (f0 − e^ε f1)_+ over R^n, f_b the symmetrised output density (σ = 1); grid step h."""
    xs0 = [x0] + list(others)
    xs1 = [x1] + list(others)
    n = len(xs0)
    grid = np.arange(-half_width, half_width + mu + h / 2, h)
    perms = list(itertools.permutations(range(n)))
    tab = {x: norm.pdf(grid - x) for x in set(xs0) | set(xs1)}
    e = math.exp(eps)

    def dens2(xs):
        return sum(np.outer(tab[xs[p[0]]], tab[xs[p[1]]]) for p in perms) / len(perms)

    if n == 2:
        return float(np.maximum(dens2(xs0) - e * dens2(xs1), 0).sum() * h * h)
    total = 0.0
    for i in range(grid.size):
        f = [sum(tab[xs[p[0]]][i] * np.outer(tab[xs[p[1]]], tab[xs[p[2]]]) for p in perms) / len(perms)
             for xs in (xs0, xs1)]
        total += np.maximum(f[0] - e * f[1], 0).sum()
    return float(total * h ** 3)


def threshold_oracle(mu, n, eps, s):
    """Divergence of the count of reports above t = μ/2 + s (dataset 0 | μ; others μ), both orderings,
    in 40-digit arithmetic (mpmath binomial pmf and normal tails)."""
    import mpmath as mp
    with mp.workdps(40):
        t = mp.mpf(mu) / 2 + mp.mpf(s)
        p0, p1 = 1 - mp.ncdf(t), 1 - mp.ncdf(t - mu)
        e = mp.e ** mp.mpf(eps)
        B = [mp.binomial(n - 1, c) * p1 ** c * (1 - p1) ** (n - 1 - c) for c in range(n)]
        Bm = [mp.mpf(0)] + B
        B = B + [mp.mpf(0)]
        P0 = [p0 * x + (1 - p0) * y for x, y in zip(Bm, B)]
        P1 = [p1 * x + (1 - p1) * y for x, y in zip(Bm, B)]
        a = sum(max(x - e * y, 0) for x, y in zip(P0, P1))
        b = sum(max(y - e * x, 0) for x, y in zip(P0, P1))
        return float(max(a, b))


def analytic_gaussian_epsilon(mu, delta):
    """Balle-Wang: the ε at which Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) = δ."""
    def f(e):
        return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta
    if f(0.0) <= 0:
        return 0.0
    return brentq(f, 0.0, 200.0, xtol=1e-14, rtol=1e-14)


# ---------------------------------------------------------------------------- n = 2, 3 exact
def _check_exact(mu, eps, n, h, half_width):
    g = sa.Gaussian(sigma=1.0, sensitivity=mu)
    r = sa.delta(g, n, eps)
    others = [mu] * (n - 1)
    ex = shuffled_divergence(mu, eps, 0.0, mu, others, h, half_width)
    ex2 = shuffled_divergence(mu, eps, 0.0, mu, others, h / 2, half_width)
    err = 10 * abs(ex - ex2) + 1e-12            # the grid's error, from two step sizes
    assert r.lower <= ex2 + err
    assert ex2 - err <= r.upper
    # an interior dataset is covered by the upper bound too
    mid = shuffled_divergence(mu, eps, 0.0, mu, [mu / 2] * (n - 1), h / 2, half_width)
    assert mid - err <= r.upper


@pytest.mark.parametrize("mu,eps,n", [(0.5, 0.5, 2), (1.0, 1.0, 2), (1.5, 0.7, 3)])
def test_exact_divergence_between_bounds(mu, eps, n):
    _check_exact(mu, eps, n, 0.02 if n == 2 else 0.12, 9.0 if n == 2 else 6.5)


@pytest.mark.slow
@pytest.mark.parametrize("mu,eps", [(1.0, 0.7), (0.5, 0.3), (2.0, 1.5)])
def test_exact_divergence_between_bounds_n3_fine(mu, eps):
    _check_exact(mu, eps, 3, 0.05, 9.0)


def test_threshold_count_lower_against_binomial():
    """The default lower is at least every threshold count (its quantised pairs include them or finer cuts)."""
    mu, n, eps = 0.8, 50, 0.6
    g = sa.Gaussian(sigma=1.0, sensitivity=mu)
    r = sa.delta(g, n, eps)
    best = max(threshold_oracle(mu, n, eps, s) for s in G.THRESHOLDS)
    assert r.lower >= best * (1 - 1e-3)     # the certified lower evaluator's relative accuracy is 1e-4
    assert r.lower <= r.upper


def test_threshold_family_is_the_count_law():
    """Each threshold family alone, evaluated by the library, equals the binomial oracle."""
    from shuffleamp.bounds import LOWER_MODE, max_delta, _with_swaps
    mu, n, eps = 1.2, 30, 0.8
    fams = G._threshold_lowers(mu)
    for s, f in zip(G.THRESHOLDS, fams):
        v = max_delta(_with_swaps([f]), n, eps, LOWER_MODE)[0]
        o = threshold_oracle(mu, n, eps, s)
        assert v <= o * (1 + 1e-9) + 1e-300
        assert v >= o * (1 - 1e-3)


# ---------------------------------------------------------------------------- local sanity
@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0])
def test_never_above_analytic_gaussian(sigma):
    g = sa.Gaussian(sigma=sigma)
    for n in (2, 5000):
        for delta in (1e-4, 1e-8):
            assert sa.epsilon(g, n, delta).upper <= analytic_gaussian_epsilon(1 / sigma, delta) * (1 + 1e-9)


def test_monotone_in_n_and_sigma():
    ns = [2, 30, 10 ** 4, 10 ** 7]
    for sigma in (0.8, 2.0):
        g = sa.Gaussian(sigma=sigma)
        ups = [sa.epsilon(g, n, 1e-6).upper for n in ns]
        assert all(b <= a for a, b in zip(ups, ups[1:])), ups
    for n in (10, 10 ** 5):
        ups = [sa.epsilon(sa.Gaussian(sigma=s), n, 1e-6).upper for s in (0.6, 1.2, 4.0)]
        assert all(b <= a for a, b in zip(ups, ups[1:])), ups


def test_upper_above_lower_and_delta_consistent():
    g = sa.Gaussian(sigma=1.5, sensitivity=1.0)
    for n in (3, 100, 10 ** 6):
        r = sa.epsilon(g, n, 1e-6)
        assert 0 <= r.lower <= r.upper
        d = sa.delta(g, n, r.upper)
        assert d.upper <= 1e-6 * (1 + 1e-6)


# ---------------------------------------------------------------------------- the construction
def test_spread_decomposition_masses_and_charge():
    for mu in (0.05, 0.5, 2.0, 6.0):
        for z in (3, 8):
            dec, tau, eps_cut = G.gaussian_blanket(mu, z)
            gamma = 2 * norm.sf(mu / 2)
            assert abs(dec.c.sum() - gamma) < 1e-12
            # a-mass below the cut is 1 - (hockey-stick tail mass); tau = that tail's excess over the cap
            assert dec.a.sum() <= 1 + 1e-9
            assert tau >= (norm.sf(z) - math.exp(eps_cut) * norm.sf(z + mu)) * (1 - 1e-9)
            assert eps_cut == pytest.approx(mu * (mu / 2 + z))


def test_spread_dominates_cell_means():
    """The spread law's stop-loss transform is above the unspread (cell-mean) law's at every t (convex order)."""
    mu, z = 1.0, 6
    dec, _, _ = G.gaussian_blanket(mu, z)
    e = math.exp(0.3)
    v = (dec.a - e * dec.b) / dec.c
    y = np.linspace(-12, 12 + mu, 400001)
    dy = y[1] - y[0]
    m = np.minimum(norm.pdf(y), norm.pdf(y - mu))
    gy = (norm.pdf(y) - e * norm.pdf(y - mu)) / m
    cap = math.exp(mu * (mu / 2 + z)) - e
    gy = np.minimum(gy, cap)
    for t in np.linspace(-5, 5, 21):
        spread = float(np.maximum(v - t, 0) @ dec.c)
        exact = float(np.maximum(gy - t, 0) @ m) * dy
        assert spread >= exact - 1e-6


def test_interior_pairs_convex_order():
    """E(G_{a,b} − t)_+ <= E(G_{0,Δ} − t)_+: interior input pairs are dominated by the extreme pair."""
    mu = 1.5
    y = np.linspace(-14, 14 + mu, 60001)
    dy = y[1] - y[0]
    m = np.minimum(norm.pdf(y), norm.pdf(y - mu))

    def J(a, b, c, t):
        return np.maximum(norm.pdf(y - a) - c * norm.pdf(y - b) - t * m, 0).sum() * dy

    for c in (1.0, 1.5, 4.0):
        for t in (-10.0, -1.0, -0.1, 0.0, 0.1, 1.0, 10.0):
            ref = J(0.0, mu, c, t)
            for a in np.linspace(0, mu, 4):
                for b in np.linspace(0, mu, 4):
                    assert J(a, b, c, t) <= ref + 1e-9


# ---------------------------------------------------------------------------- (eps0, delta0)-LDP
def test_approximate_ldp_reduces_to_pure_clone():
    a = sa.ApproximateLDP(eps0=1.0, delta0=0.0)
    k = KRR(1.0, 2)
    for n in (50, 5000):
        assert sa.epsilon(a, n, 1e-6).upper == pytest.approx(sa.epsilon(k, n, 1e-6, method="clone").upper,
                                                             rel=1e-6)
        assert sa.delta(a, n, 0.3).upper == pytest.approx(sa.delta(k, n, 0.3, method="clone").upper, rel=1e-6)
        # lower: the larger of binary RR and 3-RR at eps0 (both eps0-LDP), on their Theorem-14 datasets
        lo = sa.epsilon(a, n, 1e-6).lower
        ref = max(sa.epsilon(k, n, 1e-6).lower, sa.epsilon(KRR(1.0, 3), n, 1e-6).lower)
        assert lo == pytest.approx(ref, rel=1e-4) and lo <= sa.epsilon(a, n, 1e-6).upper


def test_approximate_ldp_monotone_in_delta0():
    n = 2000
    prev_u, prev_l = 0.0, 0.0
    for d0 in (0.0, 1e-14, 1e-12, 1e-11, 1e-10):
        r = sa.epsilon(sa.ApproximateLDP(1.0, d0), n, 1e-6)
        assert r.upper >= prev_u and r.lower >= prev_l * (1 - 1e-9)
        assert r.lower <= r.upper
        prev_u, prev_l = r.upper, r.lower
    # above eps0 the local profile (delta0) and the revealing randomizer (delta0) close the bracket
    r = sa.delta(sa.ApproximateLDP(1.0, 1e-9), n, 5.0)
    assert r.lower <= 1e-9 <= r.upper <= 1e-9 * (1 + 1e-12) and r.lower >= 1e-9 * (1 - 1e-12)


def test_approximate_ldp_domain_caps_the_charge():
    big = sa.delta(sa.ApproximateLDP(1.0, 1e-9), 10 ** 4, 0.2).upper
    two = sa.delta(sa.ApproximateLDP(1.0, 1e-9, domain=2), 10 ** 4, 0.2).upper
    assert two < big


def test_approximate_ldp_lower_randomizer_is_eps0_delta0_ldp():
    """Binary RR at log((e^ε0 + δ0)/(1 − δ0)) is (ε0, δ0)-LDP: both hockey sticks equal δ0."""
    for eps0, d0 in ((0.5, 1e-3), (2.0, 0.05)):
        E1 = (math.exp(eps0) + d0) / (1 - d0)
        p = E1 / (E1 + 1)
        assert max(p - math.exp(eps0) * (1 - p), 0) == pytest.approx(d0, rel=1e-9)


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kw,param", [({"sigma": 0.0}, "sigma"), ({"sigma": -1.0}, "sigma"),
                                      ({"sigma": float("nan")}, "sigma"), ({"sigma": "1"}, "sigma"),
                                      ({"sigma": 1.0, "sensitivity": 0.0}, "sensitivity"),
                                      ({"sigma": 1.0, "sensitivity": float("nan")}, "sensitivity"),
                                      ({"sigma": 0.01, "sensitivity": 1.0}, "sigma")])
def test_gaussian_bad_input(kw, param):
    with pytest.raises(ParameterError) as e:
        sa.Gaussian(**kw)
    assert e.value.parameter == param


@pytest.mark.parametrize("d0", [-0.1, 1.0, 1.5, float("nan"), None])
def test_approximate_ldp_bad_delta0(d0):
    with pytest.raises(ParameterError) as e:
        sa.ApproximateLDP(1.0, d0)
    assert e.value.parameter == "delta0"


def test_approximate_ldp_charge_above_target():
    # the charge n * delta0 = 1e-4 is above delta: the local (eps0, delta0) profile answers (eps <= eps0)
    r = sa.epsilon(sa.ApproximateLDP(1.0, 1e-8), 10 ** 4, 1e-5)
    assert r.lower <= r.upper <= 1.0
    with pytest.raises(ParameterError) as e:          # below delta0 no finite epsilon exists
        sa.epsilon(sa.ApproximateLDP(1.0, 1e-8), 10 ** 4, 1e-9)
    assert e.value.parameter == "delta"


# ---------------------------------------------------------------------------- accounting and the CLI
def test_rounds_and_profile():
    g = sa.Gaussian(sigma=2.0)
    one = sa.epsilon(g, 10 ** 5, 1e-6)
    tot = sa.compose_rounds([(g, 10 ** 5, 10)], delta=1e-6, max_seconds=TOTAL_SECONDS)
    assert one.upper <= tot.upper and tot.lower <= tot.upper
    up, lo = sa.privacy_profile(g, 1000, [0.0, 0.1, 1.0])
    assert (lo <= up).all() and (up >= g.delta_charge).all()


def test_approximate_ldp_rounds_carry_the_infinity_mass():
    a = sa.ApproximateLDP(1.0, 1e-13)
    pure = sa.compose_rounds([(sa.ApproximateLDP(1.0), 10 ** 5, 10)], epsilon=0.05)
    charged = sa.compose_rounds([(a, 10 ** 5, 10)], epsilon=0.05)
    assert charged.upper >= pure.upper
    assert charged.lower >= -math.expm1(10 * math.log1p(-1e-13)) * (1 - 1e-9)   # the revealing member
    tot = sa.compose_rounds([(a, 10 ** 5, 10)], delta=1e-7)       # fewer users kept: finite below R n δ0
    assert tot.lower <= tot.upper < math.inf
    with pytest.raises(ParameterError) as e:                      # even one user: 1 - (1 - δ0)^R above δ
        sa.compose_rounds([(a, 10 ** 5, 10)], delta=5e-13)
    assert e.value.parameter == "delta"


def test_cli(capsys):
    import json
    from shuffleamp.cli import main
    assert main(["epsilon", "--mechanism", "gaussian", "--sigma", "2", "--sensitivity", "1", "--n", "1e5",
                 "--delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["result"]
    assert out["epsilon_lower"] <= out["epsilon_upper"]
    assert main(["delta", "--mechanism", "approx-ldp", "--eps0", "1", "--delta0", "1e-12", "--n", "1e4",
                 "--epsilon", "0.5", "--json"]) == 0
    capsys.readouterr()
    assert main(["delta", "--mechanism", "population", "--group", "300:gaussian:sigma=2", "--group",
                 "200:gaussian:sigma=3", "--epsilon", "0.1", "--json"]) == 0
    capsys.readouterr()
    assert main(["epsilon", "--mechanism", "gaussian", "--sigma", "0", "--n", "100", "--delta", "1e-6",
                 "--json"]) != 0
    assert json.loads(capsys.readouterr().out)["error"]["parameter"] == "sigma"


def test_gaussian_population():
    G_ = sa.Gaussian
    pop = sa.population([(G_(sigma=2.0), 300), (G_(sigma=3.0), 200)])
    r = sa.delta(pop, epsilon=0.1)
    for gr in r.groups:
        assert 0 <= gr.lower <= gr.upper
    # one group only: the single round's truncation rungs and quantised pairs on the same law (the rungs chosen
    # may differ: within a few per cent, never below the certified lower bound)
    one = sa.delta(sa.population([(G_(sigma=2.0), 1000)]), epsilon=0.1)
    ref = sa.delta(G_(sigma=2.0), 1000, 0.1)
    assert ref.lower <= one.upper and one.lower <= ref.upper
    assert ref.upper * 0.9 <= one.upper <= 1.1 * ref.upper
    assert one.lower == pytest.approx(ref.lower, rel=1e-9)
    with pytest.raises(ParameterError):
        sa.population([(G_(sigma=2.0, sensitivity=1.0), 10), (G_(sigma=2.0, sensitivity=2.0), 10)])


def test_population_gammas_closed_form():
    """γ of a larger-σ user w.r.t. the target's blanket: inf_y m_σ(y) / ω_t(y) on a fine grid."""
    st, D = 1.0, 1.0
    y = np.linspace(-30, 31, 2_000_001)
    mt = np.minimum(norm.pdf(y, 0, st), norm.pdf(y, D, st))
    gt = 2 * norm.sf(D / (2 * st))
    for s in (1.0, 1.5, 3.0):
        ms = np.minimum(norm.pdf(y, 0, s), norm.pdf(y, D, s))
        brute = (ms / (mt / gt)).min()
        assert G.population_gammas(np.array([s]), st, D)[0] <= brute * (1 + 1e-9)
        assert G.population_gammas(np.array([s]), st, D)[0] >= brute * (1 - 1e-6)
    assert G.population_gammas(np.array([0.5]), st, D)[0] == 0.0


def test_plan_and_sweep(tmp_path):
    from shuffleamp.config import load_plan
    p = tmp_path / "plan.toml"
    p.write_text('[[collection]]\nname = "latency"\nmechanism = "gaussian"\nsigma = 2.0\nsensitivity = 1.0\n'
                 'n = 10000\ndelta = 1e-8\nrounds = 3\n\n[[collection]]\nname = "approx"\n'
                 'mechanism = "approx-ldp"\neps0 = 1.0\ndelta0 = 1e-15\nn = 10000\ndelta = 1e-8\n')
    plan = load_plan(str(p))
    assert plan[0].build() == sa.Gaussian(sigma=2.0, sensitivity=1.0)
    assert plan[1].build() == sa.ApproximateLDP(1.0, 1e-15)
    t = sa.sweep("gaussian", sigma=[1.0, 2.0], n=[100], delta=1e-6)
    ups = list(t["epsilon_upper"]) if hasattr(t, "columns") else [r["epsilon_upper"] for r in t]
    assert ups[1] <= ups[0]


def test_comparison_methods_refused():
    from shuffleamp.errors import OutOfRegimeError
    for m in (sa.Gaussian(sigma=2.0), sa.ApproximateLDP(1.0, 1e-12)):
        with pytest.raises(OutOfRegimeError):
            sa.epsilon(m, 1000, 1e-6, method="clone")
