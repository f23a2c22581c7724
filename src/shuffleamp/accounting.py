r"""Budget accounting over repeated shuffled rounds: privacy profiles, PLD export, composition.

A shuffled round of an ε0-LDP randomizer is bounded by the optimal blanket / general-clone
bound of Su, Cheng and Wang ("Decomposition-Based Optimal Bounds for Privacy Amplification via
Shuffling", IEEE S&P 2026, Theorems 12 and 13; short version arXiv:2504.07414).  This module
turns that bound into a *dominating pair* that composes, exports it to Google's
``dp_accounting`` as a pessimistic privacy loss distribution (PLD), and composes rounds only
through ``dp_accounting``'s own ``compose`` / ``self_compose``.

Arguments (derived here; each is tested by brute force in ``tests/test_accounting.py``)
---------------------------------------------------------------------------------------

**A. The optimal bound is the privacy profile of a fixed pair.**  For one ordered input pair
:math:`(x^0_1, x^1_1)` with decomposition :math:`(a, b, c, \beta)`, let :math:`P^B_0` (resp.
:math:`P^B_1`) be the law of the histogram of component labels when user 1 draws label
:math:`j` with probability :math:`a_j` (resp. :math:`b_j`) and each of the other
:math:`n-1` users draws :math:`j` with probability :math:`c_j` or a left-over label with
probability :math:`\beta`.  With :math:`M` the multinomial law of the :math:`n` labels drawn
i.i.d. from :math:`(c, \beta)`, :math:`P^B_0(h) = M(h)\sum_j (a_j/c_j)\,h_j/n`, so

.. math::

    D_{e^\varepsilon}(P^B_0\|P^B_1) = \sum_h M(h)\Big(\sum_j \tfrac{a_j - e^\varepsilon b_j}{c_j}
    \tfrac{h_j}{n}\Big)_+ = \tfrac1n E\Big[\Big(\sum_{i=1}^n G_i\Big)_+\Big],

the GPARV formula of Su–Cheng–Wang Theorem 12.  The pair does not depend on ε, and the shuffled
output on any neighbouring datasets with that differing pair is a post-processing of it
(Theorems 12–13), so :math:`\varepsilon \mapsto \delta^*(\varepsilon)` is the privacy profile
of a dominating pair in the sense of Zhu, Dong and Wang ("Optimal Accounting of Differential
Privacy via Characteristic Function", AISTATS 2022).  The tests enumerate this histogram pair
for n ≤ 6 and compare.

**B. Negative ε.**  For any pair and :math:`\alpha = e^\varepsilon`,
:math:`(P-\alpha Q)_+ = P - \alpha Q + (\alpha Q - P)_+` pointwise, hence
:math:`D_\alpha(P\|Q) = 1 - \alpha + \alpha D_{1/\alpha}(Q\|P)`.  The reversed pair
:math:`(Q\|P)` is the decomposition with ``a`` and ``b`` exchanged (``Decomposition.swapped``).
The families used here are closed under swapping, so the profile on ℝ is
:math:`U(\varepsilon) = 1 - e^\varepsilon + e^\varepsilon U(-\varepsilon)` for ε < 0, with
:math:`U` on ε ≥ 0 the maximum over the families; a certified upper (lower) value at
:math:`-\varepsilon` gives a certified upper (lower) value at ε.  Because the family set is
swap-closed, the remove and add directions have the same profile and the exported PLD is
symmetric.

**C. The pointwise maximum over ordered input pairs is the profile of a dominating pair.**
Write each pair's profile as :math:`\delta_i(\varepsilon) = 1 + f_i^*(-e^\varepsilon)` with
:math:`f_i = T(P_i, Q_i)` its tradeoff function and :math:`f^*(y) = \sup_x (yx - f(x))`
(Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022, Prop. 2.12).  Then
:math:`\max_i f_i^* = (\min_i f_i)^* = g^*` where :math:`g` is the greatest closed convex
minorant of :math:`\min_i f_i` (a function and its closed convex envelope have the same
conjugate).  :math:`g` is a tradeoff function: it is convex and continuous on [0, 1]; it is
≥ 0 (0 is a convex minorant) and ≤ 1 − x (each :math:`f_i` is); :math:`g(1) = 0`; and it is
non-increasing, since :math:`g(x_1) < g(x_2)` for some :math:`x_1 < x_2 < 1` would give, by
convexity, :math:`g(x_2) \le \max(g(x_1), g(1)) = g(x_1)`.  By Dong–Roth–Su (Prop. 2.2) some
pair :math:`(P^*, Q^*)` has :math:`T(P^*, Q^*) = g \le f_i`, so it dominates every ordered
pair, and its profile :math:`1 + g^*(-e^\varepsilon) = \max_i \delta_i(\varepsilon)` on all of
ℝ.  f-DP composition (Dong–Roth–Su Theorem 3.2, adaptive) then bounds R rounds by the R-fold
product of :math:`(P^*, Q^*)`, which is what the PLD composition computes.

**D. Pessimistic PLD from certified upper values (connect the dots).**
``dp_accounting.pld.pld_pmf.create_pmf_pessimistic_connect_dots(d, k, deltas)`` (Doroshenko,
Ghazi, Kamath, Kumar, Manurangsi, "Connect the Dots: Tighter Discrete Approximations of
Privacy Loss Distributions", PETS 2022, Algorithm 1) takes strictly increasing *integers*
``k`` (losses ``k * d``, either sign) and the δ's there; it puts mass on each ``k_i * d`` and
the last δ on the infinity atom.  Reading its source (dp_accounting 0.6.0): with
:math:`x = e^\varepsilon`, the resulting PLD's curve
:math:`\delta_{\rm CTD}(x) = \delta_n + \sum_i p_i (1 - x e^{-\varepsilon_i})_+` is the
piecewise-linear interpolation in x of the points :math:`(0, 1), (x_1, \delta_1), \dots,
(x_n, \delta_n)`, constant :math:`\delta_n` beyond :math:`x_n`; the masses are slope
differences, non-negative iff the points are convex in x (it clips negative masses to 0).
We feed it certified *upper* values :math:`\hat\delta_i \ge U(\varepsilon_i)`, first replaced
by a running minimum (U is non-increasing) and then by the greatest convex minorant of
:math:`\{(0,1), (x_i, \hat\delta_i)\}` evaluated at the :math:`x_i`.  The true U is convex in x
(a hockey-stick divergence is a supremum of affine functions of α) and lies below every
point, so it lies below that minorant (the greatest convex function below the points): the
values stay certified upper bounds, are convex and non-increasing, and no mass is clipped.
Between grid points the chord of a convex function lies above it, beyond the last point
:math:`\delta_{\rm CTD} = \delta_n \ge U`, and below :math:`x_1` the chord from (0, 1) lies
above U.  Hence :math:`\delta_{\rm CTD} \ge U` on all of ℝ: the exported pair dominates
(:math:`T_{\rm CTD} \le g`).  It is a valid pair: its Q-mass is
:math:`\sum_i p_i e^{-\varepsilon_i} = (1-\delta_1)/x_1 \le 1` because
:math:`\delta_1 \ge U(\varepsilon_1) \ge 1 - x_1` for every pair.  Mass beyond the grid's
last point :math:`\varepsilon_n` (where :math:`U \le` ``tail_delta``) is charged to the
infinity atom, never dropped.

**E. Lower bound for a total.**  R rounds on one concrete neighbouring dataset pair are the
R-fold product of that pair, so the composed divergence of any post-processing of it is a
valid lower bound on the total.  For a Theorem-14 dataset (Su–Cheng–Wang Theorem 14: user 1
holds :math:`x^0_1` or :math:`x^1_1`, the other n − 1 users :math:`x_2`), with components
:math:`S = \{j: a_j > b_j\}` the count :math:`C` of reports in S is a post-processing of the
histogram, and :math:`C = B + \mathrm{Bin}(n-1, c(S))` with :math:`B \sim \mathrm{Bern}(a(S))`
resp. :math:`\mathrm{Bern}(b(S))`.  For binary randomized response (two outputs) C is the
whole histogram, so this is the exact concrete pair (Cheu, Smith, Ullman, Zeber, Zhilyaev,
"Distributed Differential Privacy via Shuffling", EUROCRYPT 2019, for the count view).  The
count laws are built exactly (``scipy.stats.binom`` log-PMF) on a window; counts outside it
are *dropped*.  That keeps a lower bound: the PLD's δ is a sum over outcomes of non-negative
terms :math:`(P(o) - e^\varepsilon Q(o))_+`, the composition of restricted measures is the
product measure restricted to :math:`W^R`, and dropping outcomes only removes terms.  (Merging
the outside into one bin would be a post-processing too, but is not needed.)  Losses are
rounded *down* to the grid (``dp_accounting``'s optimistic rounding), which lowers every term.
``dp_accounting``'s ``self_compose`` adds its ``tail_mass_truncation`` t to the infinity mass
and may alias at most t of mass (its FFT wraps around), so each ``self_compose`` can raise the
optimistic δ by at most 2t: this is subtracted (``AccountingResult.error``).  The weakest
always-valid lower bound — composition never decreases ε, since the adversary may ignore all
rounds but one — is the single-round certified lower ε (or δ); the accountant reports the
larger of the two and names it in ``lower_method``.

**F. Populations** (:func:`shuffleamp.population`).  For a user of group g, the certified
per-group bound of :mod:`shuffleamp.personalized` is the profile of one fixed pair that does not
depend on ε (the user's sample plus :math:`M'` blanket samples, with :math:`M'` revealed; the
shuffled output is a post-processing of it), maximised over that user's ordered input pairs, which
are swap-closed: arguments A–C apply to it.  A population round is accounted by the pointwise
maximum over its groups of these profiles, itself the profile of a pair dominating every group's
pair (argument C), so the composed total bounds *every* user, whatever their group (a user in
group g may have a smaller total; composing each group separately would show it, at G times the
cost).  Its lower bound composes the concrete score pair of the group with the largest total
variation (``shuffleamp.personalized``, 'Lower bound'): a valid lower bound for that group's user.
A population's PLD uses at most :data:`POPULATION_POINTS` profile points per side (each is one
Bromwich integral per group; connect-the-dots stays pessimistic on fewer points).

Certified vs estimated: the single-round values are certified as in
:func:`shuffleamp.exact.delta_exact`.  ``dp_accounting``'s FFT convolution round-off (of order
1e-16 per bin) is not charged: an *estimate*, as are the binomial log-PMF values of the lower
bound.  Shuffle bounds are for replace-one (substitution) neighbours: compose them only with
replace-one PLDs of other mechanisms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from dp_accounting.pld import pld_pmf
from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution
from scipy import stats

from . import _validate
from ._numerics import inverse_monotone
from .bounds import LOWER_MODE, max_delta
from .decomposition import dedupe
from .errors import ParameterError, ResourceLimitError, UnsupportedGparvError
from .exact import delta_exact_profile
from .personalized import Population, group_profiles, score_pair_logpmf

#: Profile evaluations per side of the PLD grid (the grid may be finer; see :func:`to_pld`).
DEFAULT_POINTS = 1000
#: The grid ends where the certified profile is below this; the rest goes to the infinity mass.
DEFAULT_TAIL_DELTA = 1e-15
#: ``tail_mass_truncation`` passed to every ``dp_accounting`` composition.
TAIL_MASS_TRUNCATION = 1e-15
#: Refuse grids with more integer steps than this between 0 and the support edge.
MAX_GRID_STEPS = 20_000_000
#: The optimistic lower-bound PLD uses the grid step d / LOWER_REFINE (floor rounding costs up to R d).
LOWER_REFINE = 8
#: Profile evaluations per side of a population's PLD (each costs one Bromwich integral per group).
POPULATION_POINTS = 64
#: Binomial window of the concrete-pair lower bound: mean ± LOWER_WINDOW_SD standard deviations.
LOWER_WINDOW_SD = 14.0
_U = float(np.finfo(np.float64).eps)


__all__ = ["AccountingResult", "privacy_profile", "to_pld", "compose_rounds", "max_rounds", "max_eps0",
           "binary_rr_rounds"]


# ---------------------------------------------------------------------------- per-ε evaluation
class _PopulationFamily:
    """A population (:mod:`shuffleamp.personalized`) as one family: the pointwise maximum over its
    groups of the certified per-group profiles (argument F)."""

    def __init__(self, pop):
        self.pop = pop

    def values(self, eps: np.ndarray, side: str) -> np.ndarray:
        return group_profiles(self.pop, eps, side).max(axis=0)


def _is_population(mechanism) -> bool:
    return isinstance(mechanism, Population)


def _check_mechanism(mechanism, n):
    """A mechanism and its n, or a population and its total (n None or equal to it)."""
    if _is_population(mechanism):
        if n is not None and _validate.count(n, "n") != mechanism.n:
            raise ParameterError("n", f"is taken from the population (n = {mechanism.n}); pass None or the same "
                                      f"total, got {n}")
        return mechanism, mechanism.n
    _validate.mechanism(mechanism)
    n = _validate.count(n, "n")
    at_n = getattr(mechanism, "at_n", None)
    if at_n is not None:
        # randomizers beyond pure LDP (shuffleamp.gaussian): the decompositions for these n users, whose
        # upper profile carries an additive charge (``delta_charge``, see _certified_profile)
        mechanism = at_n(n)
    return mechanism, n


def _families(mechanism, which: str) -> list:
    """Swap-closed list of GPARV families (objects with ``.gparv(eps)``), duplicates dropped by law."""
    if _is_population(mechanism):
        return [_PopulationFamily(mechanism)]
    base = mechanism.upper_decompositions() if which == "upper" else mechanism.lower_decompositions()
    return dedupe([f for d in base for f in (d, d.swapped())])


def _certified_profile(fams, n: int, eps: np.ndarray, side: str) -> np.ndarray:
    """max over ``fams`` of the certified δ at every ε >= 0 of the array ``eps`` (side "upper"/"lower").

    One batched call per family (:func:`shuffleamp.exact.delta_exact_profile`: the exact evaluator's
    per-ε work in one compiled loop, the same certified values as the bounds layer's dispatch
    :func:`shuffleamp.bounds.max_delta` gives one ε at a time).  A family the exact evaluator
    cannot take goes through that dispatch (certified FFT engine) one ε at a time.
    """
    eps = np.asarray(eps, dtype=np.float64)
    best = np.zeros(eps.shape)
    for f in fams:
        if isinstance(f, _PopulationFamily):
            np.maximum(best, f.values(eps, side), out=best)
            continue
        try:
            v = delta_exact_profile(f, n, eps, mode=side)
        except (UnsupportedGparvError, ResourceLimitError):
            mode = "spread" if side == "upper" else LOWER_MODE
            v = np.array([max_delta([f], n, float(e), mode)[0] for e in eps.ravel()]).reshape(eps.shape)
        charge = getattr(f, "delta_charge", 0.0) if side == "upper" else 0.0
        if charge:
            # a truncated tail or an approximate-LDP term charged to every upper δ (shuffleamp.gaussian)
            v = np.nextafter(v + charge, np.inf)
        np.maximum(best, v, out=best)
    return np.minimum(best, 1.0)


def _profile_values(fams, n: int, eps: np.ndarray, side: str) -> np.ndarray:
    """Certified profile on all of ℝ (argument B for ε < 0), rounded to the conservative side."""
    eps = np.asarray(eps, dtype=np.float64)
    h = _certified_profile(fams, n, np.abs(eps), side)
    neg = eps < 0
    v = np.where(neg, -np.expm1(eps) + np.exp(eps) * h, h)
    if side == "upper":
        return np.minimum(np.where(neg, v * (1 + 4 * _U), v), 1.0)
    return np.maximum(np.where(neg, v * (1 - 4 * _U), v), 0.0)


def privacy_profile(mechanism, n=None, epsilons=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Certified privacy profile δ(ε) of one shuffled round, for ε on all of ℝ.

    ``upper`` is the profile of the blanket / general-clone dominating pair, maximised over the
    mechanism's ordered input pairs (a dominating pair itself: module docstring, arguments A–C);
    ``lower`` that of the Theorem-14 concrete dataset pairs (both orders).  For ε < 0 both use
    :math:`D_{e^\varepsilon}(P\|Q) = 1 - e^\varepsilon + e^\varepsilon D_{e^{-\varepsilon}}(Q\|P)`.

    Parameters
    ----------
    mechanism : Mechanism or Population
        A randomizer from :mod:`shuffleamp.mechanisms` or a composition of them, or a population
        (:func:`shuffleamp.population`): then the pointwise maximum over its groups (argument F).
    n : int
        Number of users (>= 1); for a population None or its total.
    epsilons : float or array_like of float
        Any finite real ε (nats), any shape.

    Returns
    -------
    upper, lower : ndarray of float64
        Arrays of the shape of ``epsilons``: certified upper and lower values of the round's
        privacy profile; ``lower <= upper``.

    Raises
    ------
    ParameterError
        ``n`` not an integer >= 1, ``epsilons`` NaN or infinite, or ``mechanism`` not a
        shuffleamp mechanism.

    Notes
    -----
    One batched certified evaluation per family (:func:`shuffleamp.exact.delta_exact_profile`):
    about 0.05 ms per ε and mode for 10-RR at n = 1e8 (``bench/results_profile.md``).

    References
    ----------
    Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
    Shuffling", IEEE S&P 2026, Theorems 12–14.  Zhu, Dong, Wang, "Optimal Accounting of
    Differential Privacy via Characteristic Function", AISTATS 2022.  Dong, Roth, Su,
    "Gaussian Differential Privacy", JRSS-B 2022.
    """
    mechanism, n = _check_mechanism(mechanism, n)
    eps = np.asarray(_validate.real("epsilons", epsilons), dtype=np.float64)
    up = _profile_values(_families(mechanism, "upper"), n, eps, "upper")
    lo = np.minimum(_profile_values(_families(mechanism, "lower"), n, eps, "lower"), up)
    return up, lo


# ---------------------------------------------------------------------------- pessimistic PLD
@dataclass(frozen=True)
class _Round:
    """One round type: mechanism, n, the upper families and the support edge of its profile."""

    mechanism: Any
    n: int
    fams: list
    edge: float          # smallest evaluated ε with certified U(ε) <= tail_delta (0 if U(0) is)

    @classmethod
    def make(cls, mechanism, n: int, tail_delta: float) -> _Round:
        fams = _families(mechanism, "upper")

        def U(e):
            return float(_certified_profile(fams, n, np.array([e]), "upper")[0])

        if U(0.0) <= tail_delta:
            return cls(mechanism, n, fams, 0.0)
        hi = float(mechanism.eps0)
        for bump in (1e-9, 1e-6, 1e-3):  # δ(eps0) = 0 for pure eps0-LDP; atoms ~1e-16 > 0 from rounding
            if U(hi) <= tail_delta:
                break
            hi = float(mechanism.eps0) * (1.0 + bump)
        if U(hi) > tail_delta:
            raise ResourceLimitError(f"the certified profile does not fall below tail_delta={tail_delta:g} "
                                     f"by eps0={hi:g}", parameter="tail_delta", resource="grid")
        # the support edge: the smallest ε (to 1 % relative) whose certified U(ε) <= tail_delta
        br = inverse_monotone(lambda e: (U(e), None), tail_delta, 1e-12, hi, side="upper", rel_tol=0.01,
                              scale="log")
        hi = float(br.feasible)
        return cls(mechanism, n, fams, hi)

    def own_interval(self, points: int) -> float:
        return self.edge / points if self.edge > 0 else 1e-4


def _convex_minorant(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Greatest convex minorant of the points (x_i, y_i) (x increasing), evaluated at x."""
    hull: list[int] = []
    for i in range(x.size):
        while len(hull) >= 2:
            i1, i2 = hull[-2], hull[-1]
            if (y[i2] - y[i1]) * (x[i] - x[i1]) >= (y[i] - y[i1]) * (x[i2] - x[i1]):
                hull.pop()
            else:
                break
        hull.append(i)
    return np.interp(x, x[hull], y[hull])


def _upper_pld(rnd: _Round, d: float, points: int) -> PrivacyLossDistribution:
    """Pessimistic connect-the-dots PLD of one round on the integer grid k * d (argument D)."""
    if any(isinstance(f, _PopulationFamily) for f in rnd.fams):
        points = min(points, POPULATION_POINTS)     # one Bromwich integral per group and point
    K = math.ceil(rnd.edge / d)
    if K > MAX_GRID_STEPS:
        raise ResourceLimitError(f"the PLD grid would need {K} steps of {d:g} up to eps={rnd.edge:g}; pass a "
                                 "larger value_discretization_interval", parameter="value_discretization_interval",
                                 resource="memory")
    ks = np.arange(K + 1) if K <= points else np.unique(np.round(np.linspace(0, K, points + 1)).astype(np.int64))
    pos = _certified_profile(rnd.fams, rnd.n, ks * d, "upper")
    pos = np.minimum.accumulate(pos)                     # U is non-increasing on [0, inf)
    kneg = -ks[:0:-1]                                    # -K .. -1
    pneg = pos[:0:-1]
    neg = np.minimum(-np.expm1(kneg * d) + np.exp(kneg * d) * pneg, 1.0) * (1 + 4 * _U)
    ints = np.concatenate([kneg, ks])
    dl = np.minimum(np.concatenate([neg, pos]), 1.0)
    dl = np.minimum.accumulate(dl)
    x = np.concatenate([[0.0], np.exp(ints * d)])
    y = _convex_minorant(x, np.concatenate([[1.0], dl]))[1:]
    y = np.clip(y, 0.0, 1.0)
    pmf = pld_pmf.create_pmf_pessimistic_connect_dots(d, ints, y)
    return PrivacyLossDistribution(pmf)


def to_pld(mechanism, n=None, *, value_discretization_interval: float | None = None, points: int = DEFAULT_POINTS,
           tail_delta: float = DEFAULT_TAIL_DELTA) -> PrivacyLossDistribution:
    r"""Certified pessimistic ``dp_accounting`` PLD of one shuffled round.

    Built by connect-the-dots from the certified upper profile (module docstring, argument D):
    its hockey-stick curve is >= the round's optimal bound δ*(ε) at every ε ∈ ℝ, so it composes
    (with ``compose`` / ``self_compose``) into certified totals, also with other replace-one
    PLDs of ``dp_accounting`` built with the same ``value_discretization_interval``.

    Parameters
    ----------
    mechanism : Mechanism or Population
        A randomizer from :mod:`shuffleamp.mechanisms` or a composition of them, or a population
        (the pointwise maximum of its groups' profiles, argument F).
    n : int
        Number of users (>= 1); for a population None or its total.
    value_discretization_interval : float, optional
        Grid step d (nats) of the PLD's losses.  Default: the round's own scale, ``edge /
        points`` where ``edge`` is the smallest ε with certified δ*(ε) <= ``tail_delta`` (for
        10-RR, ε0 = 1, n = 1e8 the edge is about 1e-3).
    points : int
        Profile evaluations per side (>= 2).  If the grid up to ``edge`` has more steps, the
        evaluated points are a subset of the integer grid (connect-the-dots allows any
        increasing integers; still pessimistic, less tight).
    tail_delta : float
        Where the grid ends: everything beyond goes to the infinity mass (in (0, 1)).

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        Symmetric (remove = add), pessimistic; losses ``k * d`` for integers k of both signs.

    Raises
    ------
    ParameterError
        Bad ``n``, ``value_discretization_interval``, ``points`` or ``tail_delta``.
    ResourceLimitError
        The grid would have more than :data:`MAX_GRID_STEPS` steps (parameter
        ``value_discretization_interval``).

    References
    ----------
    Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, "Connect the Dots: Tighter Discrete
    Approximations of Privacy Loss Distributions", PETS 2022 (Algorithm 1).  Su, Cheng, Wang,
    IEEE S&P 2026, Theorem 13.
    """
    mechanism, n = _check_mechanism(mechanism, n)
    points, tail_delta = _grid_options(points, tail_delta)
    rnd = _Round.make(mechanism, n, tail_delta)
    d = _interval(value_discretization_interval, [rnd], points)
    return _upper_pld(rnd, d, points)


def _one_target(epsilon, delta):
    """Validate the total's target: exactly one of ``epsilon`` (→ total δ) and ``delta`` (→ total ε)."""
    if (epsilon is None) == (delta is None):
        raise ParameterError("epsilon", "give exactly one of epsilon (to get the total delta) and delta")
    if delta is not None:
        return None, _validate.delta(delta)
    return _validate.epsilon(epsilon), None


def _grid_options(points, tail_delta):
    points = _validate.count(points, "points", minimum=2)
    tail_delta = _validate.real("tail_delta", tail_delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    return points, tail_delta


def _interval(value, rounds, points) -> float:
    """The common PLD grid step: given, or the coarsest round type's own step.

    A round type whose own scale is finer is then discretised more coarsely than it would be alone;
    connect-the-dots stays pessimistic on any grid, and such a type's share of the total is small
    (its whole profile lies within a few steps of 0), so the total stays tight while the composed
    grid, whose size is (total support) / step, stays small.
    """
    if value is None:
        return max(r.own_interval(points) for r in rounds)
    return _validate.real("value_discretization_interval", value, lo=0.0, lo_open=True)


# ---------------------------------------------------------------------------- concrete-pair lower PLD
def _count_pair(dec, n: int):
    """(log P, log Q, exact) of the count of reports in {j: a_j > b_j} for a Theorem-14 pair."""
    a, b, c = np.asarray(dec.a), np.asarray(dec.b), np.asarray(dec.c)
    S = a > b
    al, be, ga = float(a[S].sum()), float(b[S].sum()), float(min(c[S].sum(), 1.0))
    m = n - 1
    if m == 0:
        cs = np.array([0, 1])
        lb, lbm = np.array([0.0, -np.inf]), np.array([-np.inf, 0.0])
    else:
        mu, sd = m * ga, math.sqrt(m * ga * (1.0 - ga))
        lo = max(0, math.floor(mu - LOWER_WINDOW_SD * sd - 2))
        hi = min(m, math.ceil(mu + LOWER_WINDOW_SD * sd + 2))
        cs = np.arange(lo, hi + 2)
        lb, lbm = stats.binom.logpmf(cs, m, ga), stats.binom.logpmf(cs - 1, m, ga)
    with np.errstate(divide="ignore"):
        logP = np.logaddexp(np.log1p(-al) + lb, np.log(al) + lbm)
        logQ = np.logaddexp(np.log1p(-be) + lb, np.log(be) + lbm)
    return logP, logQ, int(a.size) == 2


def _optimistic_pmf(logU, logL, d: float):
    """Optimistic rounded PMF (dict int -> mass, infinity mass) of the loss log U - log L under U."""
    keep = np.isfinite(logU)
    inf_mass = float(np.sum(np.exp(logU[keep & ~np.isfinite(logL)])))
    keep &= np.isfinite(logL)
    loss = logU[keep] - logL[keep]
    k = np.floor(loss / d).astype(np.int64)
    k0 = int(k.min())
    mass = np.bincount(k - k0, weights=np.exp(logU[keep]))
    nz = np.nonzero(mass)[0]
    return dict(zip((nz + k0).tolist(), mass[nz].tolist())), inf_mass


def _lower_pld(mechanism, n: int, d: float):
    """Optimistic non-symmetric PLD of the best count statistic of a Theorem-14 pair, or (None, "")."""
    if _is_population(mechanism):
        return _population_lower_pld(mechanism, d)
    best, best_tv, label = None, -1.0, ""
    for dec in mechanism.lower_decompositions():
        if not all(hasattr(dec, f) for f in ("a", "b", "c", "beta")) or float(dec.beta) > 0.0:
            continue
        logP, logQ, exact = _count_pair(dec, n)
        tv = float(np.sum(np.maximum(np.exp(logP) - np.exp(logQ), 0.0)))
        if tv > best_tv:
            best_tv, best, label = tv, (logP, logQ), ("concrete-pair (exact count)" if exact
                                                       else "concrete-pair (count statistic)")
    if best is None:
        return None, ""
    logP, logQ = best
    pr, ir = _optimistic_pmf(logP, logQ, d)
    pa, ia = _optimistic_pmf(logQ, logP, d)
    pld = PrivacyLossDistribution.create_from_rounded_probability(
        pr, ir, d, pessimistic_estimate=False, rounded_probability_mass_function_add=pa,
        infinity_mass_add=ia, symmetric=False)
    return pld, label


def _population_lower_pld(pop, d: float):
    """Optimistic PLD of a population's concrete score pair (argument F), for the group whose pair has
    the largest total variation (a lower bound for that group's user, hence for the worst user)."""
    best, best_tv = None, -1.0
    for g in range(len(pop.groups)):
        logP, logQ = score_pair_logpmf(pop, g)
        tv = float(np.sum(np.maximum(np.exp(logP) - np.exp(logQ), 0.0)))
        if tv > best_tv:
            best_tv, best = tv, g
    logP, logQ = score_pair_logpmf(pop, best)
    logQr, logPr = score_pair_logpmf(pop, best, reverse=True)
    pr, ir = _optimistic_pmf(logP, logQ, d)
    pa, ia = _optimistic_pmf(logQr, logPr, d)
    pld = PrivacyLossDistribution.create_from_rounded_probability(
        pr, ir, d, pessimistic_estimate=False, rounded_probability_mass_function_add=pa,
        infinity_mass_add=ia, symmetric=False)
    return pld, "concrete-pair (population score statistic)"


# ---------------------------------------------------------------------------- accountant
@dataclass(frozen=True)
class AccountingResult:
    """Total privacy over composed shuffled rounds (from :func:`compose_rounds`).

    Attributes
    ----------
    quantity : {"epsilon", "delta"}
        What ``upper`` and ``lower`` are.
    upper : float
        Certified upper bound on the total ε (nats; ``inf`` if no finite ε fits) or δ.
    lower : float
        Certified lower bound on the total (see ``lower_method``); ``lower <= upper``.
    epsilon, delta : float or None
        The given target (the other one is the answer).
    rounds : tuple of (dict, int, int)
        ``(mechanism.describe(), n, R)`` per round type.
    method : str
        How ``upper`` was computed.
    lower_method : str
        ``"concrete-pair (exact count)"`` (binary randomized response: the exact pair),
        ``"concrete-pair (count statistic)"`` (a post-processing of the Theorem-14 pair) or
        ``"single-round"`` (the largest single-round certified lower bound; composition never
        decreases the total).
    value_discretization_interval : float
        The common PLD grid step d (nats).
    error : float
        δ subtracted from the optimistic composition for ``dp_accounting``'s tail truncation
        (2 t per ``self_compose``).
    notes : tuple of str
        What is certified and what is an estimate.
    """

    quantity: str
    upper: float
    lower: float
    epsilon: float | None
    delta: float | None
    rounds: tuple
    method: str
    lower_method: str
    value_discretization_interval: float
    error: float
    notes: tuple = ()

    def to_dict(self) -> dict:
        """JSON-serialisable dict: ``<quantity>_upper`` / ``<quantity>_lower``, the target, the rounds.

        Returns
        -------
        dict
            Keys ``<quantity>_upper``, ``<quantity>_lower``, ``epsilon``/``delta`` (the given one),
            ``rounds`` (list of ``{"mechanism", "n", "rounds"}``), ``method``, ``lower_method``,
            ``value_discretization_interval``, ``error``, ``notes``.
        """
        q = self.quantity
        given = "delta" if q == "epsilon" else "epsilon"
        return {f"{q}_upper": float(self.upper), f"{q}_lower": float(self.lower),
                given: getattr(self, given),
                "rounds": [{"mechanism": m, "n": int(n), "rounds": int(R)} for m, n, R in self.rounds],
                "method": self.method, "lower_method": self.lower_method,
                "value_discretization_interval": float(self.value_discretization_interval),
                "error": float(self.error), "notes": list(self.notes)}

    def __repr__(self):
        given = (f"delta={self.delta:g}" if self.quantity == "epsilon" else f"epsilon={self.epsilon:g}")
        rs = ", ".join(f"{r[0].get('mechanism')}×{r[2]}" for r in self.rounds)
        return (f"AccountingResult({self.quantity}: upper={self.upper:.6g}, lower={self.lower:.6g}, {given}, "
                f"rounds=[{rs}], lower_method={self.lower_method!r})")


def _validate_rounds(rounds) -> list:
    if isinstance(rounds, tuple) and len(rounds) == 3 and (hasattr(rounds[0], "upper_decompositions")
                                                          or _is_population(rounds[0])):
        rounds = [rounds]
    try:
        rounds = list(rounds)
    except TypeError as exc:
        raise ParameterError("rounds", "must be a list of (mechanism, n, R) tuples") from exc
    if not rounds:
        raise ParameterError("rounds", "must contain at least one (mechanism, n, R) tuple")
    out = []
    for r in rounds:
        if not (isinstance(r, (tuple, list)) and len(r) == 3):
            raise ParameterError("rounds", f"each entry must be (mechanism, n, R), got {r!r}")
        m, n, R = r
        m, n = _check_mechanism(m, n)
        out.append((m, n, _validate.count(R, "rounds")))
    return out


def _compose_all(parts, extra=()):
    """Compose [(pld, R), ...] and extra PLDs with dp_accounting; returns (pld, number of self_compose)."""
    total, calls = None, 0
    for pld, R in parts:
        if R > 1:
            pld = pld.self_compose(R, tail_mass_truncation=TAIL_MASS_TRUNCATION)
            calls += 1
        total = pld if total is None else total.compose(pld, tail_mass_truncation=TAIL_MASS_TRUNCATION)
    for pld in extra:
        try:
            total = total.compose(pld, tail_mass_truncation=TAIL_MASS_TRUNCATION)
        except ValueError as exc:
            raise ParameterError("extra_plds", f"cannot be composed with the shuffled rounds ({exc}); build them "
                                 "with the same value_discretization_interval and pessimistic_estimate=True") from exc
    return total, calls


def compose_rounds(rounds, *, epsilon: float | None = None, delta: float | None = None, extra_plds=(),
                   value_discretization_interval: float | None = None, points: int = DEFAULT_POINTS,
                   tail_delta: float = DEFAULT_TAIL_DELTA, lower: bool = True) -> AccountingResult:
    r"""Certified total (ε or δ) over repeated shuffled rounds, composed by ``dp_accounting``.

    Each round type is exported by :func:`to_pld` (pessimistic), self-composed R times and
    composed with the others and with ``extra_plds`` through ``dp_accounting``'s
    ``self_compose`` / ``compose``.  The lower bound composes, with ``dp_accounting``'s
    optimistic rounding, the PLD of a concrete Theorem-14 pair (module docstring, argument E),
    or falls back to the single-round certified lower bound.

    Parameters
    ----------
    rounds : sequence of (mechanism, n, R)
        Round types: a shuffleamp mechanism, the number of users n (>= 1) and the number of
        rounds R (integer >= 1) in which one user takes part.  A single tuple is accepted.
    epsilon : float, optional
        Target total ε (nats, >= 0): the answer is the total δ.  Give exactly one of
        ``epsilon`` and ``delta``.
    delta : float, optional
        Target total δ in (0, 1): the answer is the total ε.
    extra_plds : sequence of PrivacyLossDistribution
        Further pessimistic replace-one ``dp_accounting`` PLDs (for example a Gaussian) the same
        user takes part in; they need ``value_discretization_interval`` to be given, equal to
        theirs.  They enter the upper bound only (ignoring them keeps the lower bound valid).
    value_discretization_interval : float, optional
        Common grid step; default the coarsest own scale of the round types (see :func:`to_pld`).
    points, tail_delta
        See :func:`to_pld`.
    lower : bool
        Compute the lower bound (default True); if False, ``lower`` is 0.

    Returns
    -------
    AccountingResult
        ``quantity="epsilon"`` when ``delta`` is given, ``"delta"`` when ``epsilon`` is given.

    Raises
    ------
    ParameterError
        ``rounds`` malformed, R < 1 or not an integer (parameter ``'rounds'``), bad ``n``,
        ``delta`` outside (0, 1), ``epsilon`` < 0, both or neither target given, ``extra_plds``
        without ``value_discretization_interval`` or with another interval.
    ResourceLimitError
        The grid would be too large (parameter ``value_discretization_interval``).

    References
    ----------
    Su, Cheng, Wang, IEEE S&P 2026, Theorems 12–14; Doroshenko et al., PETS 2022; Dong, Roth,
    Su, JRSS-B 2022, Theorem 3.2 (composition of dominating pairs).
    """
    rounds = _validate_rounds(rounds)
    epsilon, delta = _one_target(epsilon, delta)
    points, tail_delta = _grid_options(points, tail_delta)
    extra = list(extra_plds or ())
    if extra and value_discretization_interval is None:
        raise ParameterError("value_discretization_interval",
                             "must be given with extra_plds (the interval they were built with)")
    # rounds whose bound is a dominating pair up to a bad event of probability c (approximate LDP,
    # shuffleamp.gaussian): compose the pairs and add R * c to the total delta
    additive = sum(R * m.delta_charge for m, _, R in rounds if getattr(m, "charge_is_additive", False))
    if delta is not None and additive >= delta:
        raise ParameterError("delta", f"delta = {delta:g} is not above the charged approximate-LDP terms "
                                      f"sum(R * min(n, domain-1) * delta0) = {additive:.6g}")
    rts = [_Round.make(m.without_charge() if getattr(m, "charge_is_additive", False) else m, n, tail_delta)
           for m, n, _ in rounds]
    d = _interval(value_discretization_interval, rts, points)
    up_pld, _ = _compose_all([(_upper_pld(rt, d, points), R) for rt, (_, _, R) in zip(rts, rounds)], extra)
    if delta is not None:
        upper = float(up_pld.get_epsilon_for_delta(delta - additive * (1 + 1e-12)))
    else:
        upper = min(float(np.nextafter(float(up_pld.get_delta_for_epsilon(epsilon)) + additive, np.inf)), 1.0)
    lo, how, err = (_total_lower(rounds, d, epsilon, delta) if lower else (0.0, "none", 0.0))
    notes = ("upper: certified single-round profile -> pessimistic connect-the-dots PLD -> dp_accounting "
             "composition (FFT round-off not charged)",
             f"lower: {how}; dp_accounting truncation {err:.3g} in delta subtracted")
    return AccountingResult("epsilon" if delta is not None else "delta", upper, min(lo, upper), epsilon, delta,
                            tuple((m.describe(), n, R) for m, n, R in rounds),
                            "optimal blanket pair, pessimistic connect-the-dots PLD (dp_accounting)", how, d, err,
                            notes)


def _total_lower(rounds, d, epsilon, delta):
    """(lower value, lower_method, charged δ) of the total (module docstring, argument E)."""
    from .bounds import delta as _delta_bound
    from .bounds import epsilon as _epsilon_bound
    single = 0.0
    for m, n, _ in rounds:
        r = _epsilon_bound(m, n, delta) if delta is not None else _delta_bound(m, n, epsilon)
        single = max(single, float(r.lower or 0.0))
    parts, labels = [], set()
    for m, n, R in rounds:
        pld, label = _lower_pld(m, n, d / LOWER_REFINE)
        if pld is None:
            return single, "single-round", 0.0
        parts.append((pld, R))
        labels.add(label)
    total, calls = _compose_all(parts)
    err = 2.0 * TAIL_MASS_TRUNCATION * calls
    if delta is not None:
        value = float(total.get_epsilon_for_delta(min(delta + err, 1.0)))
        value = 0.0 if not math.isfinite(value) else value
    else:
        value = max(float(total.get_delta_for_epsilon(epsilon)) - err, 0.0)
    how = ("concrete-pair (exact count)" if labels == {"concrete-pair (exact count)"}
           else "concrete-pair (count statistic)")
    if single > value:
        return single, "single-round", err
    return value, how, err


# ---------------------------------------------------------------------------- inverse queries
def max_rounds(mechanism, n, epsilon: float, delta: float, *, limit: int = 10**6,
               value_discretization_interval: float | None = None, points: int = DEFAULT_POINTS) -> int:
    r"""Largest number of rounds R whose certified total fits the budget (ε, δ).

    Parameters
    ----------
    mechanism : Mechanism
        A shuffleamp mechanism.
    n : int
        Number of users per round (>= 1).
    epsilon : float
        Total ε budget (nats, > 0).
    delta : float
        Total δ budget in (0, 1).
    limit : int
        Largest R searched (>= 1); returned if it fits.
    value_discretization_interval, points
        See :func:`to_pld`.

    Returns
    -------
    int
        R >= 0 such that the composed pessimistic PLD of R rounds has ε(δ) <= ``epsilon``
        (evaluated at R itself, so certified without assuming monotonicity), and R + 1 does not
        fit (unless R = ``limit``).  0 if not even one round fits.

    Raises
    ------
    ParameterError
        Bad ``n``, ``epsilon``, ``delta`` or ``limit``.
    """
    _validate.mechanism(mechanism)
    n = _validate.count(n, "n")
    epsilon = _validate.real("epsilon", epsilon, lo=0.0, lo_open=True)
    delta = _validate.delta(delta)
    limit = _validate.count(limit, "limit")
    pld = to_pld(mechanism, n, value_discretization_interval=value_discretization_interval, points=points)

    def fits(R):
        p = pld if R == 1 else pld.self_compose(R, tail_mass_truncation=TAIL_MASS_TRUNCATION)
        return p.get_epsilon_for_delta(delta) <= epsilon

    def total(R):
        p = pld if R == 1 else pld.self_compose(int(R), tail_mass_truncation=TAIL_MASS_TRUNCATION)
        return p.get_epsilon_for_delta(delta), None

    # the total is non-decreasing in R; every returned R was evaluated and fits by itself
    br = inverse_monotone(total, epsilon, 1, min(2, limit), increasing=True, side="upper",
                          scale="integer", expand=True, limit=limit)
    return int(br.feasible) if br.feasible is not None else 0


def _with_eps0(mechanism, eps0: float):
    """The same mechanism with another ε0 (its ``with_eps0``), or ``mechanism(eps0)`` for a factory."""
    if callable(mechanism) and not hasattr(mechanism, "upper_decompositions"):
        return mechanism(eps0)
    _validate.mechanism(mechanism)
    return mechanism.with_eps0(eps0)


def max_eps0(mechanism, n, rounds: int, epsilon: float, delta: float, *, eps0_max: float = 20.0,
             rel_tol: float = 1e-3, points: int = DEFAULT_POINTS) -> float:
    r"""Largest per-round ε0 such that R shuffled rounds fit the total budget (ε, δ).

    Bisection on log ε0; the returned ε0 is one at which the certified total upper bound was
    evaluated and fits (conservative end of the final bracket).

    Parameters
    ----------
    mechanism : Mechanism or callable
        A mechanism whose kind is kept (its ε0 is ignored), or a factory ``eps0 -> Mechanism``.
    n : int
        Number of users per round (>= 1).
    rounds : int
        Number of rounds R (integer >= 1).
    epsilon : float
        Total ε budget (nats, > 0).
    delta : float
        Total δ budget in (0, 1).
    eps0_max : float
        Search ceiling (nats); returned if it fits.
    rel_tol : float
        Relative width of the final bracket.
    points : int
        See :func:`to_pld`.

    Returns
    -------
    float
        The largest evaluated fitting ε0, or 0.0 if none down to 1e-6 fits.

    Raises
    ------
    ParameterError
        Bad parameters, or a mechanism whose ε0 cannot be varied (matrix, compositions).
    """
    n = _validate.count(n, "n")
    R = _validate.count(rounds, "rounds")
    epsilon = _validate.real("epsilon", epsilon, lo=0.0, lo_open=True)
    delta = _validate.delta(delta)
    eps0_max = _validate.real("eps0_max", eps0_max, lo=0.0, lo_open=True)
    rel_tol = _validate.real("rel_tol", rel_tol, lo=1e-9, hi=0.5)

    def total(e0):
        r = compose_rounds([(_with_eps0(mechanism, e0), n, R)], delta=delta, points=points, lower=False)
        return r.upper, None

    # the total is non-decreasing in eps0; the returned eps0 was evaluated and fits by itself
    br = inverse_monotone(total, epsilon, 1e-6, eps0_max, increasing=True, side="upper",
                          rel_tol=rel_tol, scale="log")
    return float(br.feasible) if br.feasible is not None else 0.0


# ---------------------------------------------------------------------------- exact binary RR rounds
def binary_rr_rounds(eps0: float, n, rounds, *, epsilon: float | None = None, delta: float | None = None,
                     value_discretization_interval: float | None = None, points: int = DEFAULT_POINTS,
                     tail_delta: float = DEFAULT_TAIL_DELTA) -> AccountingResult:
    r"""Total over R shuffled rounds of binary randomized response from its *exact* count-law profile.

    Upper bound: the certified exact single-round profile
    :math:`\delta^*(\varepsilon) = \max` over every neighbouring dataset pair (all ``m``, both
    orderings) of the hockey-stick divergence of the count laws
    (:func:`shuffleamp.exact_count.profile_binary_rr`), exported as a pessimistic connect-the-dots
    PLD (module docstring, argument D) and self-composed R times by ``dp_accounting``.  The set of
    pairs is swap-closed, so its pointwise-maximum profile is that of a dominating pair (argument C)
    and the total is a certified upper bound without any assumption about which dataset is used in
    which round; it is tighter than :func:`compose_rounds` with ``KRR(eps0, 2)`` (the decomposition
    profile) wherever the exact profile is below the decomposition profile.

    Lower bound: the R-fold composition of the exact PLD of one concrete pair (the dataset "user 1
    holds 0 or 1, every other user 1", whose count is the whole output; argument E), with
    optimistic rounding.  This is the *exact-pair total*: the exact total if that pair is the worst
    pair in every round.  **Assumption behind calling it exact:** the same pair is worst in every
    round.  When it is not (the worst dataset depends on ε, hence on the round's share of the
    budget), the true total lies between ``lower`` and ``upper``, and both stay certified.

    Parameters
    ----------
    eps0 : float
        Local ε0 of binary randomized response, nats (> 0).
    n : int
        Number of users per round (>= 1).
    rounds : int
        Number of rounds R (>= 1) a user takes part in.
    epsilon, delta : float, optional
        Exactly one: the target total ε (answer: total δ) or the target total δ (answer: total ε).
    value_discretization_interval : float, optional
        PLD grid step d (nats); default ``edge / points`` with ``edge`` the smallest ε whose
        certified profile is <= max(``tail_delta``, the profile's certified floor).
    points : int
        Profile evaluations per side (>= 2).
    tail_delta : float
        Target mass of the infinity atom per round; the certified exact profile has a floor (the
        FFT round-off charge, about 1e-12 at n = 1e8), above which the grid ends instead.

    Returns
    -------
    AccountingResult
        ``method`` names the exact count-law profile; ``lower_method`` the concrete pair.

    Raises
    ------
    ParameterError
        Bad ``eps0``, ``n``, ``rounds``, ``points``, ``tail_delta``; both or neither target given.
    ResourceLimitError
        The count window (names ``n``) or the PLD grid would be too large.

    References
    ----------
    Cheu, Smith, Ullman, Zeber, Zhilyaev, EUROCRYPT 2019 (the count view); Doroshenko et al.,
    PETS 2022 (connect the dots); Dong, Roth, Su, JRSS-B 2022, Theorem 3.2 (composition).
    """
    from . import exact_count as _ec
    from .mechanisms import KRR

    eps0 = float(_validate.eps0(eps0))
    n = _validate.count(n, "n")
    R = _validate.count(rounds, "rounds")
    epsilon, delta = _one_target(epsilon, delta)
    points, tail_delta = _grid_options(points, tail_delta)
    # support edge on a fine grid (the profile is one hull pass per count law for all ε)
    grid = np.linspace(0.0, eps0, 4097)
    U = _ec.profile_binary_rr(eps0, n, grid)[0]
    U = np.minimum.accumulate(U)
    thr = max(tail_delta, 2.0 * float(U[-1]))     # the floor is flat: end where the profile reaches it
    edge = float(grid[int(np.argmax(U <= thr))])
    if edge <= 0.0:
        edge = eps0 / 4096
    d = edge / points if value_discretization_interval is None else _validate.real(
        "value_discretization_interval", value_discretization_interval, lo=0.0, lo_open=True)
    K = math.ceil(edge / d)
    if K > MAX_GRID_STEPS:
        raise ResourceLimitError(f"the PLD grid would need {K} steps of {d:g} up to eps={edge:g}; pass a "
                                 "larger value_discretization_interval", parameter="value_discretization_interval",
                                 resource="memory")
    ks = np.arange(K + 1) if K <= points else np.unique(np.round(np.linspace(0, K, points + 1)).astype(np.int64))
    pos = np.minimum.accumulate(_ec.profile_binary_rr(eps0, n, ks * d)[0])
    # argument B (negative ε) and D (convex minorant, connect the dots), as in _upper_pld
    kneg = -ks[:0:-1]
    neg = np.minimum(-np.expm1(kneg * d) + np.exp(kneg * d) * pos[:0:-1], 1.0) * (1 + 4 * _U)
    ints = np.concatenate([kneg, ks])
    dl = np.minimum.accumulate(np.minimum(np.concatenate([neg, pos]), 1.0))
    x = np.concatenate([[0.0], np.exp(ints * d)])
    y = np.clip(_convex_minorant(x, np.concatenate([[1.0], dl]))[1:], 0.0, 1.0)
    pld = PrivacyLossDistribution(pld_pmf.create_pmf_pessimistic_connect_dots(d, ints, y))
    total = pld.self_compose(R, tail_mass_truncation=TAIL_MASS_TRUNCATION) if R > 1 else pld
    if delta is not None:
        upper = float(total.get_epsilon_for_delta(delta))
    else:
        upper = min(float(total.get_delta_for_epsilon(epsilon)), 1.0)
    mech = KRR(eps0, 2)
    lo, how, err = _total_lower([(mech, n, R)], d, epsilon, delta)
    notes = ("upper: certified exact count-law profile (max over every dataset pair) -> pessimistic "
             "connect-the-dots PLD -> dp_accounting composition (FFT round-off not charged)",
             f"lower: {how}; exact total if this pair is the worst in every round; dp_accounting "
             f"truncation {err:.3g} in delta subtracted")
    return AccountingResult("epsilon" if delta is not None else "delta", upper, min(lo, upper), epsilon, delta,
                            ((mech.describe(), n, R),), "exact count-law profile, pessimistic connect-the-dots PLD "
                            "(dp_accounting)", how, d, err, notes)
