"""The accountant's R-round total for an (ε0, δ0)-LDP randomizer at n = 10^4, from both sides, against the exact
R-fold composition of Feldman-McMillan-Talwar's clone pair, computed here from its statement.

With δ0 = 0 the library's reduction (the minimum over the users kept m of the clone pair at
ε0 - log(1 - m δ0), mixed with infinite-loss atoms of mass m δ0) is the clone pair with all n users kept: the
pair with m + 1 users is a post-processing of the pair with m users (add one independent user who is a clone with
probability e^{-ε0} and then on the first input with probability 1/2), so by data processing, also after R-fold
composition, m = n gives the smallest divergence.  The clone pair ("Hiding Among the Clones", FOCS 2021,
Theorem 3.1): E = e^{ε0}, C ~ Bin(n - 1, 1/E), A ~ Bin(C, 1/2), Delta ~ Bern(E / (E + 1)); the pair is
(A + Delta, C + 1) versus (A + 1 - Delta, C + 1).

Oracle (no library code): every outcome's probability under both sides with scipy's binomial pmf (C restricted
to where its pmf exceeds 1e-30; outcomes with a probability below 1e-300 dropped, their mass far below the
tolerances), the privacy losses rounded up (down) to a grid of step h = 1e-5, the R-fold sum's law by one numpy
FFT, and δ(ε) = E_P[(1 - e^{ε - L_1 - ... - L_R})_+], increasing in every loss: rounding up gives an upper bound
of the exact R-fold δ, rounding down a lower bound, so their roots bracket the exact total ε.  Measured
(2026-11-27, ε0 = 1, δ = 1e-4, h = 1e-5): R = 1 bracket [0.0320067, 0.0320167], library 0.0320121 (0.017 %
above the lower root); R = 4 bracket [0.0715812, 0.0716211], library 0.0716016 (0.029 % above).  Asserted: the
library's total is at least the lower root (a 1 % lower total is 0.97 - 0.98 % below it and fails) and at most
1 % above the upper root (a looser total fails).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

import shuffleamp as sa
from exact_oracles import clone_pair_blocks


def clone_pair_losses(eps0: float, n: int):
    """(privacy losses log P/Q, P-masses) of every outcome of the clone pair with n users at local level eps0."""
    losses, masses = [], []
    for P, Q in clone_pair_blocks(eps0, n):
        keep = (P > 1e-300) & (Q > 1e-300)
        losses.append(np.log(P[keep]) - np.log(Q[keep]))
        masses.append(P[keep])
    return np.concatenate(losses), np.concatenate(masses)


def composed_loss_law(losses, masses, rounds: int, h: float, up: bool):
    """(loss values, P-masses) of the sum of ``rounds`` i.i.d. losses, each rounded up (or down) to the grid h."""
    idx = (np.ceil(losses / h) if up else np.floor(losses / h)).astype(np.int64)
    lo = int(idx.min())
    pmf = np.bincount(idx - lo, weights=masses)
    size = 1 << int(math.ceil(math.log2(rounds * len(pmf))))
    law = np.fft.irfft(np.fft.rfft(pmf, size) ** rounds, size)[: rounds * (len(pmf) - 1) + 1]
    return (np.arange(len(law)) + rounds * lo) * h, np.maximum(law, 0.0)


def hockey_stick(values, mass, eps: float) -> float:
    """E_P[(1 - e^{eps - L})_+] of a loss law."""
    k = values > eps
    return float(np.sum(mass[k] * -np.expm1(eps - values[k])))


@pytest.mark.parametrize("rounds", [1, 4])
def test_approximate_ldp_total_two_sided_large_n(rounds):
    eps0, n, target, h = 1.0, 10**4, 1e-4, 1e-5
    losses, masses = clone_pair_losses(eps0, n)
    assert abs(masses.sum() - 1) <= 1e-9
    roots = []
    for up in (False, True):
        values, law = composed_loss_law(losses, masses, rounds, h, up)
        roots.append(brentq(lambda e: hockey_stick(values, law, e) - target, 0.0, 2.0, xtol=1e-10))
    low, high = roots
    assert low <= high <= low * (1 + 2e-3)                      # the bracket is narrow against 1 %
    total = sa.compose_rounds([(sa.ApproximateLDP(eps0, 0.0), n, rounds)], delta=target)
    assert low <= total.upper <= high * 1.01, (total.upper, low, high)
    assert 0 < total.lower <= total.upper
