"""Laplace as finite decompositions: the spread upper family and the quantised lower-bound dataset.

Oracles (independent of the finite laws and of the compiled evaluator):

* adaptive quadrature of the continuous GPARVs (``test_laplace_convex._oracle``: n = 1, 2) -- the spread law's
  δ must be >= the continuous upper GPARV's, the quantised dataset's <= the continuous Theorem-14 GPARV's;
* the cell masses against quadrature of the Laplace densities over the same sets of outputs y;
* stop-loss transforms E[(G - t)_+] of the spread law >= those of the continuous GPARV (convex order), both
  computed here from the closed-form GPARV by quadrature;
* the previous certified evaluators of the continuous GPARVs (:func:`shuffleamp.evaluate.delta_convex`): the
  API's upper (spread) >= their lower, the API's lower (quantised) <= their upper.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad

import shuffleamp as sa
from shuffleamp import evaluate as EV
from shuffleamp import exact as X
from shuffleamp.mechanisms import (Laplace, laplace_cells, laplace_cells_lower, laplace_lower_gparv,
                                   laplace_spread_decomposition, laplace_upper_gparv)
from test_laplace_convex import _h, _oracle


def _law(dec, eps):
    g = dec.gparv(eps)
    return np.asarray(g.values), np.asarray(g.probs)


@pytest.mark.parametrize("eps0", [0.3, 1.5, 6.0])
def test_spread_cells_against_quadrature(eps0):
    """Each spread node's blanket / R_0 mass, summed back per cell, equals the quadrature of the densities
    over the outputs y of that cell (left side: y in (0, 1/2) with u = eps0 (1 - 2y), and y < 0)."""
    K = 7
    d = laplace_spread_decomposition(eps0, K)
    u = np.linspace(0.0, eps0, K + 1)
    gamma = math.exp(-eps0 / 2)
    assert d.beta == pytest.approx(1 - gamma, rel=1e-12)
    r0 = lambda y: 0.5 * eps0 * math.exp(-eps0 * abs(y))          # noqa: E731
    r1 = lambda y: 0.5 * eps0 * math.exp(-eps0 * abs(y - 1))      # noqa: E731
    # one side: components with b == c (ratio (e^u, 1)); their c are the blanket masses at the nodes
    side = np.isclose(d.b, d.c, rtol=1e-12)
    ratios = d.a[side] / d.c[side]
    # the blanket mass of the side (the node at u = 0 is shared by both sides: half of it)
    c_side = d.c[side].copy()
    c_side[np.argmin(ratios)] *= 0.5
    a_side = c_side * np.sort(ratios)[np.argsort(np.argsort(ratios))]
    blanket = sum(quad(lambda y: min(r0(y), r1(y)), lo, hi, epsrel=1e-12)[0]
                  for lo, hi in ((-40 / eps0, 0.0), (0.0, 0.5)))
    r0_mass = sum(quad(r0, lo, hi, epsrel=1e-12)[0] for lo, hi in ((-40 / eps0, 0.0), (0.0, 0.5)))
    assert c_side.sum() == pytest.approx(blanket, rel=1e-9)
    assert (c_side * ratios).sum() == pytest.approx(r0_mass, rel=1e-9)
    # every node's ratio is a grid point e^{u_k}
    assert np.allclose(np.log(np.sort(ratios)), u, atol=1e-12)


@pytest.mark.parametrize("eps0", [0.5, 2.0, 5.0])
@pytest.mark.parametrize("frac", [0.1, 0.5, 0.9])
def test_spread_dominates_in_convex_order(eps0, frac):
    """Mean kept and stop-loss transforms above the continuous upper GPARV's (quadrature) at every t."""
    eps = frac * eps0
    g = laplace_upper_gparv(eps0, eps)
    v, p = _law(laplace_spread_decomposition(eps0, 9), eps)
    assert float(p @ v) == pytest.approx(1 - math.exp(eps), rel=1e-9, abs=1e-12)
    lo, hi = float(g.support[0]), float(g.support[1])
    for t in np.linspace(lo, hi, 13):
        cont = _h(g, -t)                                          # E[(G - t)_+]
        spread = float(p @ np.maximum(v - t, 0.0))
        assert spread >= cont * (1 - 1e-9) - 1e-13


@pytest.mark.parametrize("eps0", [0.7, 2.5])
@pytest.mark.parametrize("frac", [0.2, 0.6])
@pytest.mark.parametrize("n", [1, 2])
def test_bracket_the_continuous_gparvs_by_quadrature(eps0, frac, n):
    """δ of the spread law >= δ of the continuous upper GPARV; δ of the quantised dataset <= δ of the continuous
    Theorem-14 GPARV (both continuous values by quadrature)."""
    eps = frac * eps0
    up = X.delta_exact_family(laplace_spread_decomposition(eps0, 16), n, eps, "upper").delta
    lo = X.delta_exact_family(laplace_cells_lower(eps0, 16), n, eps, "lower").delta
    assert up >= _oracle(laplace_upper_gparv(eps0, eps), n) * (1 - 1e-9)
    assert lo <= _oracle(laplace_lower_gparv(eps0, eps), n) * (1 + 1e-9)


@pytest.mark.parametrize("eps0,n,frac", [(1.0, 3, 0.5), (3.0, 20, 0.5), (1.0, 1000, 0.05), (6.0, 10 ** 5, 0.02)])
def test_api_against_previous_certified_evaluators(eps0, n, frac):
    """The API (finite decompositions) against the convex-order evaluation of the continuous GPARVs: each
    upper >= the other's lower."""
    eps = frac * eps0
    r = sa.delta(Laplace(eps0), n, eps)
    old_up = EV.delta_convex(laplace_upper_gparv(eps0, eps), n, "upper").delta
    old_lo = EV.delta_convex(laplace_lower_gparv(eps0, eps), n, "lower").delta
    assert r.upper >= old_lo
    assert r.lower <= old_up
    assert r.lower <= r.upper


def test_cells_rule_and_cache():
    assert laplace_cells(8.0, 10) < laplace_cells(8.0, 10 ** 6)
    assert laplace_cells(0.1, 10 ** 6) >= 32 and laplace_cells(150.0, 10 ** 6) <= 160
    assert laplace_spread_decomposition(2.0, 16) is laplace_spread_decomposition(2.0, 16)
    up, lo = Laplace(2.0).decompositions_at(10 ** 6)
    assert len(up) >= 1 and len(lo) == 2          # the quantised dataset and its reverse ordering


def test_finer_cells_tighten_both_sides():
    """Refining the grid (nested cells) can only lower the spread bound and raise the quantised lower bound."""
    eps0, n, eps = 3.0, 50, 1.5
    ups = [X.delta_exact_family(laplace_spread_decomposition(eps0, k), n, eps, "upper").delta for k in (4, 8, 16)]
    los = [X.delta_exact_family(laplace_cells_lower(eps0, k), n, eps, "lower").delta for k in (4, 8, 16)]
    assert ups[0] >= ups[1] >= ups[2] > 0
    assert los[0] <= los[1] <= los[2]
    assert los[2] <= ups[2]


# ------------------------------------------------------------------ the accountant's time budget
def test_totals_stop_within_the_time_budget():
    """A Laplace round's profile is evaluated in chunks with the time budget checked between them: under a
    budget that is already spent the call stops with a ResourceLimitError naming ``max_seconds``."""
    from shuffleamp._numerics import budget
    from shuffleamp.errors import ResourceLimitError
    with budget(max_seconds=1e-9):
        with pytest.raises(ResourceLimitError) as info:
            sa.privacy_profile(Laplace(1.0), 30, np.linspace(0.0, 1.0, 100))
    assert info.value.parameter == "max_seconds"
    # compose_rounds refuses such a call up front (its cost model against the time left), naming ``rounds``
    with budget(max_seconds=1e-9):
        with pytest.raises(ResourceLimitError) as info:
            sa.compose_rounds([(Laplace(1.0), 30, 3)], delta=1e-2, lower=False)
    assert info.value.parameter == "rounds"


def test_many_laplace_round_types_refused_up_front():
    """The cost model of a round type profiled through its finite decompositions refuses, before any
    evaluation, a call whose round types would exceed the default budget, naming ``rounds``."""
    from shuffleamp.errors import ResourceLimitError
    rounds = [(Laplace(1.0 + 0.1 * i), 30, 2) for i in range(8)]
    with pytest.raises(ResourceLimitError) as info:
        sa.compose_rounds(rounds, delta=1e-6)
    assert info.value.parameter == "rounds"
