"""The Gaussian randomizer's upper δ and the accountant's one-round total at large n (10^4 … 10^6), from both
sides, against the blanket bound computed independently by an FFT of the n-fold sum.

The bound the library certifies is the blanket bound of Balle, Bell, Gascon, Nissim ("The Privacy Blanket of the
Shuffle Model", CRYPTO 2019) in the form of Su, Cheng, Wang (IEEE S&P 2026, arXiv:2504.07414, Theorems 12-13):
with mu = sensitivity / sigma, the blanket probability gamma = 2 Phi(-mu / 2), the blanket count
Binomial(n - 1, gamma) and the privacy-amplification variable G (0 w.p. 1 - gamma, otherwise e^{mu w} - e^eps on
the left and 1 - e^eps e^{mu w} on the right, w >= 0 of blanket density phi(w + mu/2)),

    delta_blanket(eps) = E[(G_1 + ... + G_n)_+] / n.

Oracle (no library code): ``blanket_delta_fft`` of ``test_gaussian_blanket_oracle.py`` -- G replaced by its
conditional mean on cells of width h = 0.01 in w (normal CDFs from scipy), each atom split between two
neighbours of a lattice of step eta = 0.01 (mean kept), the n-fold law by one numpy FFT.  Its own error: halving
h and eta changes it by 6e-6 - 8e-6 relative at the points below (asserted below 1e-4 in each test).

Why the δ query needs a moderate δ: the library's upper δ carries a charged truncation tail and the spread
grid's slack.  Measured against this oracle (2026-11-27, mu = 1): at eps = 0.5 / sqrt(n) (δ about 5e-3 … 5e-4)
the library's upper is 0.22 - 0.24 % above the oracle at n = 10^4, 10^5 and 10^6, but it is 0.5 - 0.8 % above at
eps = 2 - 3 / sqrt(n), and 2 - 11 % above at mu = 0.5, δ <= 1e-6 (where the existing ε check of
``test_gaussian_blanket_oracle.py`` only asserts the δ side's direction, which is why a 1 % lower δ passed it).
At the points below the check is two-sided: the upper is at least the oracle less 0.1 % (soundness, a 1 %
lower upper is about 0.8 % below the oracle and fails) and at most 1 % above it (a looser answer fails).

The accountant's one-round total (``compose_rounds`` with R = 1, its own PLD and dp_accounting composition) is
checked at n = 10^4 against the oracle's root: measured 0.22 % above it at δ = 1e-3 (0.18 % at δ = 1e-4);
asserted at least the root less 0.1 % (a 1 % lower total is about 0.8 % below the root and fails) and at most
1 % above it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

import shuffleamp as sa
from test_gaussian_blanket_oracle import blanket_delta_fft

#: The oracle's accuracy allowance on the sound side (its measured error is below 1e-5 relative).
ORACLE_SLACK = 1e-3
#: Largest accepted excess of the library's upper over the oracle (measured 0.22 - 0.24 % for δ).
LOOSENESS = 0.01


@pytest.mark.parametrize("mu,n", [(1.0, 10**4), (1.0, 10**5), (1.0, 10**6)])
def test_gaussian_delta_upper_two_sided_large_n(mu, n):
    eps = 0.5 / math.sqrt(n)
    oracle = blanket_delta_fft(mu, eps, n)
    finer = blanket_delta_fft(mu, eps, n, h=0.005, eta=0.005)
    assert abs(finer / oracle - 1) <= 1e-4, (oracle, finer)          # the oracle has converged
    assert oracle > 1e-5                                               # far above the FFT's round-off
    r = sa.delta(sa.Gaussian(sigma=1.0, sensitivity=mu), n, eps)
    assert oracle * (1 - ORACLE_SLACK) <= r.upper <= oracle * (1 + LOOSENESS), (r.upper, oracle)
    assert 0 < r.lower <= r.upper


@pytest.mark.parametrize("mu,n,delta", [(1.0, 10**4, 1e-3)])
def test_gaussian_one_round_total_two_sided_large_n(mu, n, delta):
    """The root eps_b of the oracle at the target δ; the accountant's one-round total ε within
    [eps_b (1 - 0.1 %), eps_b (1 + 1 %)]."""
    eps_b = brentq(lambda e: math.log(blanket_delta_fft(mu, e, n) / delta), 0.2 / math.sqrt(n),
                   6.0 / math.sqrt(n), xtol=1e-8)
    assert abs(blanket_delta_fft(mu, eps_b, n, h=0.005, eta=0.005) / delta - 1) <= 1e-4
    total = sa.compose_rounds([(sa.Gaussian(sigma=1.0, sensitivity=mu), n, 1)], delta=delta)
    assert eps_b * (1 - ORACLE_SLACK) <= total.upper <= eps_b * (1 + LOOSENESS), (total.upper, eps_b)
    assert 0 < total.lower <= total.upper


# ---------------------------------------------------------------------------- R rounds: connect the dots
def connect_the_dots_law(profile, d: float):
    """Loss law of the symmetric pair whose hockey-stick curve interpolates ``profile`` linearly in x = e^eps.

    ``profile[i]`` is δ(i d), i = 0 … K.  The pair is symmetric (remove = add), so at eps = -j d the curve is
    1 - x + x δ(j d) with x = e^{-jd}.  The curve f(x) = sum_i p_i (1 - x e^{-eps_i})_+ + p_inf of a loss law
    with P-masses p_i at eps_i = i d (i = -K … K) is piecewise linear with slope change p_i e^{-eps_i} at
    e^{eps_i}; the masses are read off the interpolant's slopes (from (0, 1) on the left, flat at p_inf =
    δ(K d) on the right).  Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, "Connect the Dots", PETS 2022.
    Returns (lowest loss index, P-masses on consecutive loss indices, p_inf)."""
    K = len(profile) - 1
    x = np.exp(np.arange(-K, K + 1) * d)
    xr = np.exp(np.arange(1, K + 1) * d)
    f = np.concatenate([(1 - 1 / xr + profile[1:] / xr)[::-1], profile])
    slopes = np.concatenate([[(f[0] - 1) / x[0]], np.diff(f) / np.diff(x), [0.0]])
    return -K, x * np.diff(slopes), float(profile[-1])


def composed_epsilon(first, masses, p_inf, d, rounds, delta):
    """The root in eps of the R-fold composition's δ(eps) = E_P[(1 - e^{eps - L})_+] + 1 - (1 - p_inf)^R."""
    masses = np.maximum(masses, 0.0)            # FFT round-off makes a few masses -1e-9: dropped
    size = 1 << int(math.ceil(math.log2(rounds * len(masses))))
    law = np.maximum(np.fft.irfft(np.fft.rfft(masses, size) ** rounds, size)[: rounds * (len(masses) - 1) + 1],
                     0.0)
    values = (np.arange(len(law)) + rounds * first) * d
    inf_part = -math.expm1(rounds * math.log1p(-p_inf))

    def excess(eps):
        k = values > eps
        return float(np.sum(law[k] * -np.expm1(eps - values[k]))) + inf_part - delta
    return brentq(excess, 0.0, float(values[-1]), xtol=1e-10)


def test_gaussian_total_over_rounds_two_sided_large_n():
    """R = 4 rounds at n = 10^4: the oracle's profile δ(i d) (FFT, d = 0.004, until it is below 1e-12, the rest
    charged as p_inf), connected (symmetric pair) and composed 4-fold by one numpy FFT.  Its root converges
    as d decreases (measured 0.051953, 0.051787, 0.051738, 0.051724 at d = 0.004, 0.002, 0.001, 0.0005): at
    d = 0.004 it is 0.45 % above its limit (d = 0.004 keeps the test at a few seconds).  The library's total (its
    own profile, PLD and dp_accounting composition; 0.051907) is 0.09 % below the d = 0.004 root and 0.36 % above
    the limit; asserted at least the root less 0.6 % (its excess over the limit and 0.15 %: a 1 % lower total is
    1.1 % below the root and fails) and at most 1 % above it."""
    mu, n, rounds, delta, d = 1.0, 10**4, 4, 1e-3, 0.004
    profile = [blanket_delta_fft(mu, 0.0, n)]
    while profile[-1] >= 1e-12:
        profile.append(blanket_delta_fft(mu, len(profile) * d, n))
    profile = np.maximum(np.array(profile), 0.0)
    first, masses, p_inf = connect_the_dots_law(profile, d)
    assert abs(masses.sum() + p_inf - 1) <= 1e-9 and masses.min() >= -1e-8
    root = composed_epsilon(first, masses, p_inf, d, rounds, delta)
    total = sa.compose_rounds([(sa.Gaussian(sigma=1.0, sensitivity=mu), n, rounds)], delta=delta)
    assert root * (1 - 6e-3) <= total.upper <= root * (1 + LOOSENESS), (total.upper, root)
    assert 0 < total.lower <= total.upper
