"""The Gaussian randomizer's certified upper bound, from both sides, against the blanket bound computed
independently here (n = 2 by a direct double sum; n >= 10^4 by an FFT of the n-fold sum).

The bound the library certifies is the blanket / general-clone bound (Su, Cheng, Wang, IEEE S&P 2026,
arXiv:2504.07414, Theorems 12-13, with the blanket of Balle, Bell, Gascon, Nissim, CRYPTO 2019)

    delta_blanket(eps) = E[(G_1 + G_2)_+] / 2,

with G = 0 w.p. 1 - gamma, and otherwise, with w >= 0 of blanket density phi(w + mu/2) on each side
(mu = sensitivity / sigma), G = e^{mu w} - e^eps on the left and 1 - e^eps e^{mu w} on the right.

Oracle (nothing from the library): cut w into cells of width h and replace G on each cell by its conditional
mean (normal CDFs from scipy).  The conditional-mean law is a mean-preserving contraction of G, so by convex
order (Shaked, Shanthikumar, "Stochastic Orders", Theorem 3.A.12) its value is a lower bound of
delta_blanket, and it converges as h -> 0 (two step sizes: their difference is below 1e-5 relative here).
The library's upper must be above it (soundness), and within 2 % of it: the spread discretisation and the
charged tail cost 0.2 - 0.9 % at these points, so an upper bound 1 % too low fails the first check and a
loosening beyond 2 % the second.  The ε query and the accountant's one-round total are checked the same way at
the oracle's root.

At large n (n >= 10^4) the oracle is an estimate, not a bound: the same conditional-mean law, each atom's
mass split between its two neighbours on a lattice of step eta (mean kept), the n-fold sum's pmf by one numpy
FFT and the power n of its transform, and E[S_+]/n summed over the lattice; halving h and eta changes it by
less than 1e-3 relative here.  In ε terms (the root of the estimate at the library's δ) the library's certified
upper ε is 0.16 - 0.45 % above it at these points, so the check is two-sided at the ε level: at least the root
less the estimate's accuracy, at most 1 % above it (a 1 % lower ε fails the first).  On the δ side the library's
upper at large n is 2 - 9 % above the blanket value (the charged truncation tail and the spread grid), so only
its direction is checked there.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

import shuffleamp as sa

#: Largest relative excess of the library's certified upper δ over the blanket value at n = 2 (measured
#: 0.2 - 0.9 %: the spread discretisation and the charged tail).
#: compose_rounds' time budget in these tests: generous (they test values, not the budget; a loaded
#: machine's wall clock can be several times the CPU time)
TOTAL_SECONDS = 300.0


SLACK = 0.02


def blanket_law(mu: float, eps: float, h: float, w_max: float = 9.0):
    """(values, masses) of the conditional-mean law of G on cells of width h in w, both sides, and the atom 0."""
    lo = np.arange(0.0, w_max, h)
    hi = lo + h
    mass = norm.cdf(hi + mu / 2) - norm.cdf(lo + mu / 2)          # blanket mass of the cell (each side)
    a_mass = norm.cdf(hi - mu / 2) - norm.cdf(lo - mu / 2)        # mass of R_0 on the left cell = A * blanket
    keep = mass > 0
    A = a_mass[keep] / mass[keep]                                  # E[e^{mu w} | cell]
    E = math.exp(eps)
    gamma = 2 * norm.cdf(-mu / 2)
    values = np.concatenate([A - E, 1 - E * A, [0.0]])
    masses = np.concatenate([mass[keep], mass[keep], [1 - gamma]])
    return values, masses


def blanket_delta_n2(mu: float, eps: float, h: float = 0.002) -> float:
    """E[(X + Y)_+] / 2 for X, Y i.i.d. of :func:`blanket_law`: for each x, x P(Y > -x) + E[Y; Y > -x] from
    suffix sums of the sorted law (one binary search per atom)."""
    v, p = blanket_law(mu, eps, h)
    order = np.argsort(v)
    v, p = v[order], p[order]
    tail_p = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])          # P(Y >= v[j])
    tail_m = np.concatenate([np.cumsum((p * v)[::-1])[::-1], [0.0]])    # E[Y; Y >= v[j]]
    j = np.searchsorted(v, -v, side="right")                             # first atom with y > -x
    return float(np.sum(p * (v * tail_p[j] + tail_m[j]))) / 2


@pytest.mark.parametrize("mu,eps", [(0.5, 0.5), (1.0, 1.0), (2.0, 1.0), (1.0, 0.3)])
def test_delta_upper_two_sided_n2(mu, eps):
    fine, coarse = blanket_delta_n2(mu, eps, 0.002), blanket_delta_n2(mu, eps, 0.004)
    assert abs(fine - coarse) <= 1e-5 * fine                       # the oracle has converged
    r = sa.delta(sa.Gaussian(sigma=1.0, sensitivity=mu), 2, eps)
    assert fine <= r.upper <= fine * (1 + SLACK), (r.upper, fine)
    assert r.lower <= r.upper


@pytest.mark.parametrize("mu,delta", [(1.0, 0.05), (2.0, 0.2)])
def test_epsilon_upper_two_sided_n2(mu, delta):
    """The oracle's root ε_b (delta_blanket(ε_b) = δ, from a lower bound of delta_blanket, so ε_b is at most the
    blanket bound's ε): the library's certified upper ε is at least ε_b and within 2 % of it."""
    eps_b = brentq(lambda e: blanket_delta_n2(mu, e) - delta, 1e-6, 20.0, xtol=1e-10)
    r = sa.epsilon(sa.Gaussian(sigma=1.0, sensitivity=mu), 2, delta)
    assert eps_b <= r.upper <= eps_b * (1 + SLACK), (r.upper, eps_b)


@pytest.mark.parametrize("mu,delta", [(1.0, 0.05), (0.5, 0.02)])
def test_one_round_total_two_sided_n2(mu, delta):
    """The accountant's one-round total (its own profile, PLD and composition) against the same root: certified
    (at least ε_b) and within 1 % of it (measured 0.2 - 0.5 %)."""
    eps_b = brentq(lambda e: blanket_delta_n2(mu, e) - delta, 1e-6, 20.0, xtol=1e-10)
    total = sa.compose_rounds([(sa.Gaussian(sigma=1.0, sensitivity=mu), 2, 1)], delta=delta, max_seconds=TOTAL_SECONDS)
    assert eps_b <= total.upper <= eps_b * 1.01, (total.upper, eps_b)
    assert total.lower <= total.upper



@pytest.mark.parametrize("mu,delta", [(1.0, 0.05), (0.5, 0.02)])
def test_one_group_population_one_round_total_two_sided_n2(mu, delta):
    """A population of one Gaussian group is that mechanism (a shared mechanism), so its one-round total through
    the population path is certified against the same independent root and within 1 % of it."""
    eps_b = brentq(lambda e: blanket_delta_n2(mu, e) - delta, 1e-6, 20.0, xtol=1e-10)
    pop = sa.population([(sa.Gaussian(sigma=1.0, sensitivity=mu), 2)])
    total = sa.compose_rounds([(pop, None, 1)], delta=delta, max_seconds=TOTAL_SECONDS)
    assert eps_b <= total.upper <= eps_b * 1.01, (total.upper, eps_b)
    assert total.lower <= total.upper

# ---------------------------------------------------------------------------- large n: the FFT estimate
def blanket_delta_fft(mu: float, eps: float, n: int, h: float = 0.01, eta: float = 0.01,
                      width_sd: float = 16.0) -> float:
    """Estimate of E[(G_1 + ... + G_n)_+] / n for the conditional-mean law (see the module docstring)."""
    v, p = blanket_law(mu, eps, h)
    m1 = float(np.sum(p * v))
    sd = math.sqrt(n * (float(np.sum(p * v * v)) - m1 * m1))
    lo, hi = n * m1 - width_sd * sd, max(width_sd * sd, n * m1 + width_sd * sd)
    keep = np.abs(v) < (hi - lo) / 4           # one user's atoms far outside the window: mass below 1e-20
    v, p = v[keep], p[keep]
    size = 1 << int(math.ceil(math.log2((hi - lo) / eta)))
    x = v / eta
    i0 = np.floor(x).astype(np.int64)
    frac = x - i0
    pmf = np.zeros(size)
    np.add.at(pmf, i0 % size, p * (1 - frac))
    np.add.at(pmf, (i0 + 1) % size, p * frac)
    law = np.fft.irfft(np.exp(n * np.log(np.fft.rfft(pmf).astype(complex))), size)
    k0 = int(math.floor(lo / eta))
    values = ((np.arange(size) - k0) % size + k0) * eta        # lattice index -> value in the window [lo, hi)
    return float(np.sum(np.where(values > 0, values * law, 0.0))) / n


@pytest.mark.parametrize("mu,n,delta", [(0.5, 10**4, 1e-8), (1.0, 10**4, 1e-6)])
def test_epsilon_upper_two_sided_large_n(mu, n, delta):
    g = sa.Gaussian(sigma=1.0, sensitivity=mu)
    r = sa.epsilon(g, n, delta)
    est = blanket_delta_fft(mu, r.upper, n)
    assert abs(est / blanket_delta_fft(mu, r.upper, n, h=0.005, eta=0.005) - 1) <= 1e-3
    assert est <= delta * (1 + 2e-3)                                   # the upper ε is sound for the blanket
    eps_b = brentq(lambda e: math.log(blanket_delta_fft(mu, e, n) / delta), 0.8 * r.upper, r.upper * (1 + 1e-6),
                   xtol=1e-7 * r.upper)
    assert eps_b * (1 - 1e-3) <= r.upper <= eps_b * 1.01, (r.upper, eps_b)
    d = sa.delta(g, n, r.upper)
    assert d.upper >= est * (1 - 2e-3)                                  # direction only on the δ side
