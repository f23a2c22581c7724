"""The compiled integrand of personalized populations (``kernels.population_nodes``, integrated by
``kernels.bromwich_population``) against independent computations.

* Node values: :math:`g(t) = \\tilde\\Phi(M(\\theta+it))/\\tilde\\Phi(M(\\theta))/(\\theta+it)^2` evaluated in mpmath
  straight from the definition of the outer function (Gauss–Laguerre form
  :math:`\\tilde\\Phi(w) = w\\sum_k c_k s_k \\prod_g (1-\\gamma_g+\\gamma_g s_k w)^{N_g}`, or the window
  :math:`\\sum_m p_m w^{m+1}/(m+1)`), with no logarithm, no run product and no tilt shortcut: the kernel's values
  must agree within their own rounding estimate (the charged ``rel``).
* Certified δ: the whole integral (compiled nodes, modulus bounds, quadrature and tail bounds) against the
  binomial-sum oracle ``exact_oracles.blanket_mixture_bounds`` (no Bromwich integral), both sides, for
  populations of many groups with equal counts (the kernel's run products) and unequal counts.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from shuffleamp import personalized as P
from shuffleamp._numerics import LogMgf

import exact_oracles as E


def _law(vals, mass, gam, N):
    return P._PopLaw(LogMgf(np.asarray(vals, float), np.asarray(mass, float)),
                     P._Mixture(np.asarray(gam, float), np.asarray(N, float)))


def _mp_nodes(law, t, dps=40):
    """(Re g, |g|) at each t, in mpmath, from the outer function's definition."""
    mix = law.mix
    out = []
    with mp.workdps(dps):
        v = [mp.mpf(float(x)) for x in law.v]
        p = [mp.mpf(float(x)) for x in law.p]
        th = mp.mpf(float(law.theta))

        def M(z):
            return mp.fsum(pj * mp.exp(z * vj) for vj, pj in zip(v, p))

        if mix.how == "rule":
            s = [mp.exp(-mp.mpf(float(x))) for x in mix.x]
            c = [mp.exp(mp.mpf(float(x))) for x in mix.logc]
            gam = [mp.mpf(float(x)) for x in mix.gam]
            N = [int(x) for x in mix.N]

            def Phi(w):
                return w * mp.fsum(ck * sk * mp.fprod((1 - gg + gg * sk * w) ** Ng for gg, Ng in zip(gam, N))
                                   for ck, sk in zip(c, s))
        else:
            ms = [int(x) for x in mix.ms]
            pm = [mp.mpf(float(x)) for x in mix.pmf]

            def Phi(w):
                return mp.fsum(pk * w ** (m + 1) / (m + 1) for m, pk in zip(ms, pm))

        ref = Phi(M(th))
        for tt in t:
            z = th + 1j * mp.mpf(float(tt))
            g = Phi(M(z)) / ref / z ** 2
            out.append((float(mp.re(g)), float(abs(g))))
    return np.array(out)


THREE_ATOMS = ([1.7, -0.2, -0.9], [0.15, 0.6, 0.25])


@pytest.mark.parametrize("gam, N", [
    ([0.3, 0.5, 0.8, 0.6, 0.45], [1600, 1600, 1600, 1000, 2400]),   # a run of three equal counts, two single
    ([0.3, 0.8], [1500, 900]),                                        # unequal counts: runs of one
    ([0.2 + 0.05 * i for i in range(12)], [300] * 12),                 # one run of twelve groups
], ids=["runs", "unequal", "one-run"])
def test_rule_nodes_against_mpmath(gam, N):
    law = _law(*THREE_ATOMS, gam, N)
    _check_nodes(law, np.concatenate([np.linspace(0.0, 3.0 * law.bell_width(), 7), np.linspace(0.5, 40.0, 9)]))


def test_hundred_group_run_products_stay_in_range():
    """A run of 99 equal groups of 5000 (binary RR, the 100-group population's worst target): the run's product
    falls below the double range at t > 1 and must be closed and restarted, not become log(0) = -inf (which
    made the rounding charge NaN and the integral fall back to the Chernoff bound)."""
    eps0s = [0.05 + (i + 0.5) * 0.0095 for i in range(100)]
    gam = [2.0 / (math.exp(x) + 1.0) for x in eps0s]
    law = _law(*_binary_law(eps0s[-1], 0.0031), gam, [5000] * 99 + [4999])
    _check_nodes(law, np.concatenate([np.linspace(0.0, 3.0 * law.bell_width(), 5), np.linspace(0.3, 30.0, 7)]))
    vals, mass = _binary_law(eps0s[-1], 0.0031)
    up, info = P._delta_law(np.array(vals), np.array(mass), np.array(gam), np.array([5000.0] * 99 + [4999.0]), 1e-5)
    assert info["evaluator"] == "exact", info


def _check_nodes(law, t):
    assert law.mix.how == "rule"
    gr, ag, rel = law.nodes(t)
    ref = _mp_nodes(law, t)
    assert np.all(np.isfinite(ag * rel)), rel
    assert np.all(rel > 0) and np.all(rel < 1e-5), rel
    tol = 4.0 * rel * ag + 1e-300                     # the kernel's own (first-order) rounding estimate, x4
    assert np.all(np.abs(gr - ref[:, 0]) <= tol), np.max(np.abs(gr - ref[:, 0]) / tol)
    assert np.all(np.abs(ag - ref[:, 1]) <= tol), np.max(np.abs(ag - ref[:, 1]) / tol)


def test_window_nodes_against_mpmath(monkeypatch):
    monkeypatch.setattr(P._Mixture, "_rule_nodes", lambda self: None)
    monkeypatch.setattr(P, "DIRECT_MAX", 0)
    law = _law(*THREE_ATOMS, [0.3, 0.8], [40, 25])
    assert law.mix.how == "pmf"
    t = np.linspace(0.0, 25.0, 11)
    gr, ag, rel = law.nodes(t)
    ref = _mp_nodes(law, t)
    tol = 4.0 * rel * ag + 1e-300
    assert np.all(np.abs(gr - ref[:, 0]) <= tol), np.max(np.abs(gr - ref[:, 0]) / tol)
    assert np.all(np.abs(ag - ref[:, 1]) <= tol), np.max(np.abs(ag - ref[:, 1]) / tol)


def _binary_law(eps0, eps):
    """Binary RR target law at ε (Su-Cheng-Wang Theorem 12, blanket γ = 2/(e^ε0 + 1)): atoms (E - e^ε)/γ... as
    two atoms A = 2(E - e)/(E + 1), B = 2(1 - eE)/(E + 1), each with mass 1/2."""
    E_, e = math.exp(eps0), math.exp(eps)
    return [2 * (E_ - e) / (E_ + 1), 2 * (1 - e * E_) / (E_ + 1)], [0.5, 0.5]


@pytest.mark.parametrize("counts", [[200] * 10, [150, 150, 150, 220, 220, 90, 90, 90, 300, 40]],
                         ids=["equal", "mixed-runs"])
def test_many_group_binary_population_against_oracle(counts):
    """Ten binary-RR groups (ε0 at the midpoints of [0.05, 1]): the target of the largest ε0, integrated by the
    compiled population law, against the binomial-sum oracle, both sides."""
    eps0s = [0.05 + (i + 0.5) * 0.095 for i in range(10)]
    g = len(eps0s) - 1
    eps = 0.05
    gam = np.array([2.0 / (math.exp(x) + 1.0) for x in eps0s])
    N = np.array(counts, dtype=float)
    N[g] -= 1                                          # the target's own group: the other users
    vals, mass = _binary_law(eps0s[g], eps)
    up, info = P._delta_law(np.array(vals), np.array(mass), gam, N, 1e-9)
    assert info["how"] == "rule" and info["evaluator"] == "exact", info
    E.assert_blanket_mixture(up, vals, mass, gam, N, lo_min=1e-12)


def test_three_atom_law_over_equal_groups_against_oracle():
    """A three-atom law (no k-RR law) over six groups, four of one count: both sides against the oracle."""
    vals, mass = np.array([1.7, -0.2, -0.9]), np.array([0.16, 0.663, 0.177])    # mean -0.02
    gam = np.array([0.3, 0.4, 0.5, 0.6, 0.8, 0.7])
    N = np.array([2000.0, 2000.0, 2000.0, 2000.0, 1000.0, 3000.0])
    up, info = P._delta_law(vals, mass, gam, N, 1e-7)
    assert info["how"] == "rule", info
    E.assert_blanket_mixture(up, vals, mass, gam, N, lo_min=1e-9)
