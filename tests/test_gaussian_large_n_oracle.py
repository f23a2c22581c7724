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
