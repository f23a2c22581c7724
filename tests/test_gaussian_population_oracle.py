"""Gaussian populations (groups with different σ) against an independent oracle at n = 2, 3.

Oracle (here, nothing from the library): the hockey-stick divergence of the shuffled outputs of two neighbouring
datasets by numerical integration over the output space R^n, each output density the permutation mixture
:math:`f(y) = \\tfrac1{n!}\\sum_\\pi \\prod_i p_{\\pi(i)}(y_i)` of the users' normal densities
:math:`N(x_i, \\sigma_i^2)`, on a uniform grid (two step sizes: their difference bounds the grid's error).  The
truth for a user of group g is the maximum over the target's inputs (0, Δ) in both orders and the other users'
inputs on a grid of [0, Δ]; ``sa.delta(sa.population(...), epsilon=...)`` must bracket it for every group.
"""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import norm

import shuffleamp as sa


def population_divergence(eps, target, others, h, half_width):
    """∫ (f0 − e^ε f1)_+ over R^n; ``target`` = (x0, x1, σ), ``others`` = [(x, σ), ...]; grid step h, the grid
    spanning [-half_width, Δ + half_width] (input units)."""
    x0, x1, st = target
    users0 = [(x0, st)] + list(others)
    users1 = [(x1, st)] + list(others)
    n = len(users0)
    hi = max(x for x, _ in users0 + users1)
    grid = np.arange(-half_width, hi + half_width + h / 2, h)
    tab = {u: norm.pdf(grid, u[0], u[1]) for u in set(users0) | set(users1)}
    perms = list(itertools.permutations(range(n)))
    e = math.exp(eps)
    if n == 2:
        def dens(us):
            return sum(np.outer(tab[us[p[0]]], tab[us[p[1]]]) for p in perms) / len(perms)
        return float(np.maximum(dens(users0) - e * dens(users1), 0).sum() * h * h)
    total = 0.0
    for i in range(grid.size):
        f = [sum(tab[us[p[0]]][i] * np.outer(tab[us[p[1]]], tab[us[p[2]]]) for p in perms) / len(perms)
             for us in (users0, users1)]
        total += np.maximum(f[0] - e * f[1], 0).sum()
    return float(total * h ** 3)


def worst_case(eps, sigma_t, other_sigmas, D, h, half_width, points, corners_only=False):
    """max over the target pair (0, Δ) in both orders and the others' inputs on ``points`` of [0, Δ] (with
    ``corners_only``: every other user at 0, or every other user at Δ)."""
    grid = np.linspace(0.0, D, points)
    best = 0.0
    combos = [(x,) * len(other_sigmas) for x in (0.0, D)] if corners_only else \
        itertools.product(grid, repeat=len(other_sigmas))
    for xs in combos:
        others = list(zip(xs, other_sigmas))
        for x0, x1 in ((0.0, D), (D, 0.0)):
            best = max(best, population_divergence(eps, (x0, x1, sigma_t), others, h, half_width))
    return best


def _check(sigmas, counts, eps, h, half_width, points, D=1.0, groups=None, corners_only=False):
    pop = sa.population([(sa.Gaussian(sigma=s, sensitivity=D), c) for s, c in zip(sigmas, counts)])
    r = sa.delta(pop, epsilon=eps)
    for g, s in enumerate(sigmas):
        if groups is not None and g not in groups:
            continue
        other = [sigmas[j] for j in range(len(sigmas)) for _ in range(counts[j] - (j == g))]
        truth = worst_case(eps, s, other, D, h, half_width, points, corners_only)
        truth2 = worst_case(eps, s, other, D, h / 2, half_width, points, corners_only) if h > 0.03 else truth
        err = 10 * abs(truth - truth2) + 1e-4 * truth + 1e-12
        grp = r.groups[g]
        assert grp.lower <= truth + err, (g, grp.lower, truth)
        assert truth - err <= grp.upper, (g, grp.upper, truth)


@pytest.mark.parametrize("sigmas,eps", [((0.7, 1.0), 0.5), ((1.0, 2.0), 0.2), ((0.5, 1.5), 1.0)])
def test_population_n2_between_bounds(sigmas, eps):
    _check(sigmas, (1, 1), eps, 0.01, 9.0, 5)


def test_population_n3_between_bounds():
    """Fast subset: the target in the first group, the other users all at 0 or all at Δ (the lower bound's
    datasets are among these; any dataset is below the upper bound)."""
    _check((0.8, 1.2), (2, 1), 0.5, 0.1, 6.0, 2, groups=(0,), corners_only=True)


@pytest.mark.slow
@pytest.mark.parametrize("sigmas,counts,eps,points", [((0.7, 1.0), (2, 1), 1.0, 3), ((1.0, 2.0), (1, 2), 0.3, 3),
                                                      ((0.6, 0.9, 1.4), (1, 1, 1), 0.6, 2)])
def test_population_n3_between_bounds_grid(sigmas, counts, eps, points):
    _check(sigmas, counts, eps, 0.05, 7.0, points)
