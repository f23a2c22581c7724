r"""Evaluator dispatch: the certified δ of one GPARV family at one (n, ε), and the maximum over families.

:func:`max_delta` is the quantity every bound of the library is built from,
:math:`\max_{(x,x')} \tfrac1n E[(\sum_i G_i)_+]` over a list of GPARV families, each family evaluated by
the requested evaluator (:func:`_evaluate`): the exact evaluator (:mod:`shuffleamp.exact`: enumeration,
binomial mixture, Bromwich integral, continuous part) with the certified FFT engine
(:mod:`shuffleamp.fft_engine`) as its fallback, or the FFT engine directly.  :func:`estimator` is the
uncertified saddle-point estimate that places the first bracket of an ε search.

The evaluator interface is :class:`FamilyEvaluator` (a certified δ and a :class:`Cost` estimate), the one
selection policy :func:`selection` (with :func:`plan`: the evaluators tried for a family and their costs,
:func:`search_cost`: the up-front cost of a whole ε search, :func:`binary_rr_plan`: binary RR's route
between its exact count law and the decomposition bound).  Every constant of the cost model, here and in the
evaluators and kernels, is listed in one table, :data:`COST_MODEL_DOC`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from . import exact as _exact
from ._numerics import check_time
from ._registry import DEFAULT_EVALUATOR
from .decomposition import Decomposition, PackedFamilies
from .errors import ResourceLimitError
from .fft_engine import DEFAULT_MAX_GRID, delta_fft, saddle_estimate
from .results import Evaluation

__all__ = ["max_delta", "estimator", "selection", "plan", "search_cost", "max_atoms", "binary_rr_plan", "Cost",
           "FamilyEvaluator", "FAMILY_EVALUATORS", "COST_MODEL_DOC", "DEFAULT_RTOL", "DEFAULT_RTOL_LOWER",
           "LOWER_MODE"]

#: Default relative δ accuracy for upper bounds (spread rounding) and lower bounds (floor rounding).
DEFAULT_RTOL = 1e-3
DEFAULT_RTOL_LOWER = 1e-4
#: Discretisation of lower bounds: spread minus its certified bias (see fft_engine._spread_bias_bound).
LOWER_MODE = "spread_lower"


def _atomic(families) -> bool:
    """Whether every family is a :class:`Decomposition` (the kernels' packed layout applies)."""
    return isinstance(families, PackedFamilies) or all(isinstance(f, Decomposition) for f in families)


@dataclass(frozen=True)
class Cost:
    """Estimated cost of one evaluation (a planning estimate, never part of a certified number).

    Attributes
    ----------
    seconds : float
        Wall-clock seconds on one core at the cost model's rates.
    nbytes : float
        Peak working memory in bytes.
    """

    seconds: float
    nbytes: float


# ---------------------------------------------------------------------------- the cost model
#: Seconds per atom x integration node of the exact evaluator (compiled Bromwich loop on a loaded core).
ATOM_NODE_SECONDS = 3e-8
#: Integration nodes assumed per evaluation when the law's own work is not known up front.
NODES_PER_EVALUATION = 1e3
#: Evaluations assumed per ε search (the up-front estimate of a whole search, :func:`search_cost`).
EVALUATIONS_PER_SEARCH = 30
#: Working bytes per atom of the exact evaluator (node and weight arrays, both sides).
ATOM_BYTES = 8.0 * (8 + 4 * _exact.GL_NODES) * 2.0
#: Seconds per enumerated count vector of the multinomial enumeration.
COUNT_VECTOR_SECONDS = 6e-8
#: Seconds and bytes per grid point of the FFT engine (transform and window arrays).
FFT_POINT_SECONDS = 3e-8
FFT_POINT_BYTES = 64.0
#: The exact evaluator hands GPARVs with a continuous part (Laplace) to the certified FFT engine up to this n.
CONTINUOUS_FFT_MAX_N = 300
#: Binary randomized response in the default method runs its exact count law first
#: (:mod:`shuffleamp.exact_count`, up to ``exact_count.DEFAULT_MAX_N`` users and ``exact_count.MAX_EPS0``) and
#: the decomposition bound only where it can improve on it (:func:`binary_rr_plan`): never when the count
#: law's certified bracket is within SKIP_DECOMPOSITION_RTOL (relative) for an ε query ...
SKIP_DECOMPOSITION_RTOL = 1e-9
#: ... the decomposition's upper only below this n and this eps0: elsewhere the count law's initial bracket
#: was below the decomposition's upper in every sampled case (random eps0 in [0.05, 10], n in [2, 1e5],
#: delta in [1e-12, 1e-2]: the decomposition won only at eps0 < 0.07, n < 500, by < 0.5 %; see
#: bench/results_exact_count.md), and its search costs 10-200 ms at moderate n ...
DECOMPOSITION_MAX_N = 600
DECOMPOSITION_MAX_EPS0 = 0.25
#: ... and the decomposition's lower when the count law's worst dataset carries a numerical band wider than
#: this (relative): at large n and small eps0 (windows of ~1e5 entries) it is then slightly higher.
LOWER_BAND_RTOL = 1e-6

COST_MODEL_DOC = r"""Where each evaluator choice is made, and the constants that make it (one table).

=====================================  ==========================================================================
choice                                 constants (module)
=====================================  ==========================================================================
family evaluator (:func:`selection`)   ``CONTINUOUS_FFT_MAX_N`` (here); an unsupported law -> FFT engine
exact: refuse -> FFT engine            ``exact.MAX_WORK``, ``exact.WORK_RATE`` (:func:`shuffleamp.exact.work_cap`:
                                       a quarter of the call's time left at that rate), ``exact.TAIL_WORK``
exact: enumeration                     ``exact.ENUMERATE_MAX`` count vectors (:func:`_exact_atoms_cost`)
exact: binomial mixture                ``kernels.MIXTURE_ENUM_FIRST`` and the step budget ``MIX_*`` of
                                       ``_ext/_mixture.pxi`` (laws of at most 7 atoms)
exact: meet in the middle              ``kernels.small_n_chosen`` (n <= 64, <= 2.5e5 points, < 1/4 of the
                                       enumeration), ``kernels.pruned_chosen`` (n <= 128, cap
                                       ``kernels.PRUNED_POINT_CAP``) in ``_ext/_small_n.pxi``
exact: continuous part                 ``exact.CONTINUOUS_EXACT_MIN_N``, ``exact.CONTINUOUS_EXACT_WORK``
FFT engine: spectral or FFT            ``fft_engine.SPECTRAL_MAX_ATOMS``, ``fft_engine.SPECTRAL_MAX_POINTS``
binary RR: count law / decomposition   ``SKIP_DECOMPOSITION_RTOL``, ``DECOMPOSITION_MAX_N``,
                                       ``DECOMPOSITION_MAX_EPS0``, ``LOWER_BAND_RTOL`` (here,
                                       :func:`binary_rr_plan`)
a whole search refused up front        ``ATOM_NODE_SECONDS``, ``NODES_PER_EVALUATION``,
                                       ``EVALUATIONS_PER_SEARCH`` (here, :func:`search_cost`)
=====================================  ==========================================================================

The compiled kernels make the choices inside one exact evaluation (enumeration, binomial mixture, meet in the
middle, Bromwich integral) by the same rules as :mod:`shuffleamp.exact`; both are listed here so that a
maintainer finds every threshold of the cost model in one place.
"""


def _exact_atoms_cost(f, g, n: int, epsilon: float, rtol: float, max_grid: int) -> Cost:
    """Cost of the exact evaluator of a finite law: the enumeration's count vectors when it enumerates
    (``exact.ENUMERATE_MAX``), else :data:`NODES_PER_EVALUATION` integration nodes per atom."""
    k = int(f.a.size) if g is None else int(g.values.size)
    count = math.comb(int(n) + k - 1, k - 1) if k > 0 else 0
    if 0 < count <= _exact.ENUMERATE_MAX:
        return Cost(count * COUNT_VECTOR_SECONDS, k * ATOM_BYTES)
    return Cost(k * NODES_PER_EVALUATION * ATOM_NODE_SECONDS, k * ATOM_BYTES)


def _fft_cost(f, g, n: int, epsilon: float, rtol: float, max_grid: int) -> Cost:
    """Cost of the FFT engine, bounded by its largest grid ``max_grid`` (it never transforms more points)."""
    N = float(max_grid)
    return Cost(FFT_POINT_SECONDS * N * max(math.log2(N), 1.0), FFT_POINT_BYTES * N)


def _continuous_cost(f, g, n: int, epsilon: float, rtol: float, max_grid: int) -> Cost:
    """Cost of the continuous-part evaluator: at most ``exact.CONTINUOUS_EXACT_WORK`` atom-node evaluations."""
    k = int(g.values.size) if g is not None else 0
    return Cost(_exact.CONTINUOUS_EXACT_WORK * ATOM_NODE_SECONDS, max(k, 1) * ATOM_BYTES)


@dataclass(frozen=True)
class FamilyEvaluator:
    r"""The evaluator interface: a certified δ of one GPARV family at one (n, ε), and its cost estimate.

    ``evaluate(f, g, n, epsilon, mode, rtol, max_grid)`` (also the object's call) returns a
    :class:`~shuffleamp.results.Evaluation` whose ``delta`` is a certified upper (``mode`` "spread") or
    lower ("spread_lower") bound on :math:`\tfrac1n E[(G_1+\dots+G_n)_+]` for :math:`G = ` ``f.gparv(epsilon)``
    (``g``, or None for an atomic :class:`~shuffleamp.decomposition.Decomposition`, which the compiled loop
    evaluates without building the GPARV), with its error charged (``charged``).  An evaluator may refuse with
    :class:`~shuffleamp.errors.ResourceLimitError` when its work budget would be exceeded; the selection
    policy (:func:`selection`) then tries the next one.  ``cost(f, g, n, epsilon, rtol, max_grid)`` is the
    :class:`Cost` of one evaluation by the cost model (the constants of this module, listed with every other
    threshold of the evaluator choice in :data:`COST_MODEL_DOC`).
    """

    name: str
    evaluate: Callable[..., Evaluation]
    cost: Callable[..., Cost]

    def __call__(self, f, g, n: int, epsilon: float, mode: str, rtol: float, max_grid: int) -> Evaluation:
        return self.evaluate(f, g, n, epsilon, mode, rtol, max_grid)


def _continuous(f, g, n, epsilon, mode, rtol, max_grid):
    """A GPARV with a continuous part (Laplace): the continuous-part integral when cheap (large n), else a finite
    law in convex order (certified side) evaluated as atoms (:func:`shuffleamp.exact.delta_continuous`)."""
    key = (f.law_key(), int(n)) if hasattr(f, "law_key") else None
    return _exact.delta_continuous(g, n, mode=mode, key=key)


def _exact_atoms(f, g, n, epsilon, mode, rtol, max_grid):
    """The exact evaluator of a finite law, no discretisation: :func:`shuffleamp.exact.delta_exact_family` (the
    compiled loop for atomic decompositions) or :func:`shuffleamp.exact.delta_exact`; within it enumeration,
    meet in the middle, the binomial mixture or the Bromwich integral by the rules listed in
    :data:`COST_MODEL_DOC`."""
    if g is None:
        return _exact.delta_exact_family(f, n, epsilon, mode=mode)
    return _exact.delta_exact(g, n, mode=mode)


def _fft(f, g, n, epsilon, mode, rtol, max_grid):
    """The certified FFT engine (:func:`shuffleamp.fft_engine.delta_fft`, its own choice "auto")."""
    g = f.gparv(epsilon) if g is None else g
    return delta_fft(g, n, mode=mode, rtol=rtol, max_grid=max_grid, evaluator="auto")


#: The evaluators of ``evaluator="exact"`` by name.
FAMILY_EVALUATORS: dict[str, FamilyEvaluator] = {
    "continuous": FamilyEvaluator("continuous", _continuous, _continuous_cost),
    "exact": FamilyEvaluator("exact", _exact_atoms, _exact_atoms_cost),
    "fft": FamilyEvaluator("fft", _fft, _fft_cost),
}


def selection(g, n: int, unsupported: str | None) -> tuple[str, ...]:
    r"""The selection policy of ``evaluator="exact"``: the evaluators to try, in order, for one family.

    ``g`` is the family's GPARV (None for an atomic decomposition), ``unsupported`` the exact evaluator's reason
    for not handling it (:func:`shuffleamp.exact.unsupported_reason`).  The certified FFT engine ends every list
    (it always answers).  The cost model:

    * a law the exact evaluator does not support goes to the FFT engine;
    * a continuous part of positive mass is integrated directly (:func:`_continuous`);
    * at n <= :data:`CONTINUOUS_FFT_MAX_N` a continuous part goes to the FFT engine next: there
      :math:`|\psi|^n` stays large at high frequencies, so the Bromwich integral would need 1e5+ nodes of
      hundreds of atoms;
    * otherwise the exact evaluator of finite laws (:func:`_exact_atoms`), whose own work model picks
      enumeration, the binomial mixture or the Bromwich integral (:data:`COST_MODEL_DOC`).
    """
    if unsupported is not None:
        return ("fft",)
    first = ("continuous",) if g is not None and g.continuous is not None and g.continuous.mass > 0 else ()
    if g is not None and g.continuous is not None and n <= CONTINUOUS_FFT_MAX_N:
        return (*first, "fft")
    return (*first, "exact", "fft")


def plan(f, n: int, epsilon: float, rtol: float = DEFAULT_RTOL, max_grid: int = DEFAULT_MAX_GRID) -> list:
    """The selection policy's evaluators for family ``f`` at (n, ε), in the order tried, each with its
    :class:`Cost`: ``[(name, Cost), ...]`` (what :func:`max_delta` would run, for inspection and planning)."""
    g = None if isinstance(f, Decomposition) else f.gparv(epsilon)
    reason = None if g is None else _exact.unsupported_reason(g)
    return [(name, FAMILY_EVALUATORS[name].cost(f, g, n, epsilon, rtol, max_grid))
            for name in selection(g, n, reason)]


def max_atoms(family_lists) -> int:
    """The most atoms of an atomic decomposition in any of the lists (a packed list counts by its largest)."""
    return max([f.a.size for fams in family_lists if not isinstance(fams, PackedFamilies)
                for f in fams if isinstance(f, Decomposition)]
               + [fams.max_atoms for fams in family_lists if isinstance(fams, PackedFamilies)], default=0)


def search_cost(family_lists) -> Cost:
    """Up-front cost of the ε searches over the family lists by the exact evaluator: :data:`EVALUATIONS_PER_SEARCH`
    evaluations of the largest family at :data:`NODES_PER_EVALUATION` nodes per atom (a refusal estimate for
    a mechanism too large to search within the budget)."""
    atoms = max_atoms(family_lists)
    return Cost(atoms * ATOM_NODE_SECONDS * NODES_PER_EVALUATION * EVALUATIONS_PER_SEARCH, atoms * ATOM_BYTES)


def binary_rr_plan(eps0: float, n: int, want_eps: bool, tight: bool) -> str:
    """Binary RR's route in the default method once its exact count law has run (:mod:`shuffleamp.exact_count`).

    Returns ``"decomposition-upper"`` (also run the decomposition's upper: below :data:`DECOMPOSITION_MAX_N`
    and :data:`DECOMPOSITION_MAX_EPS0`, unless an ε query's count-law bracket is ``tight``, within
    :data:`SKIP_DECOMPOSITION_RTOL`; a δ query there always takes the decomposition's one evaluation, so
    that ``delta(epsilon_upper) <= delta`` holds between the two queries) or ``"count-law"`` (the count
    law answers; its lower is compared with the decomposition's when its band exceeds
    :data:`LOWER_BAND_RTOL`).  Soundness is unaffected either way (upper = min, lower = max of certified
    bounds); the choice is by cost (bench/results_exact_count.md).
    """
    if n < DECOMPOSITION_MAX_N and eps0 < DECOMPOSITION_MAX_EPS0 and (not tight or not want_eps):
        return "decomposition-upper"
    return "count-law"


def _evaluate(f, epsilon: float, n: int, mode: str, rtol: float, max_grid: int, evaluator: str):
    """Certified δ of family ``f`` at ε by the requested evaluator; returns (Evaluation, fallback reason or None).

    ``"exact"`` (default) tries the evaluators of :func:`selection` in order (no discretisation unless it ends
    at the certified FFT engine, "auto"); the FFT engine answers for GPARVs the exact evaluator does not
    support or when the exact integration would exceed its work budget, and that fallback is recorded in the
    evaluation info.  Any other ``evaluator`` is an engine of :func:`shuffleamp.fft_engine.delta_fft`.
    """
    if evaluator != "exact":
        return delta_fft(f.gparv(epsilon), n, mode=mode, rtol=rtol, max_grid=max_grid, evaluator=evaluator), None
    g = None if isinstance(f, Decomposition) else f.gparv(epsilon)
    reason = None if g is None else _exact.unsupported_reason(g)
    for name in selection(g, n, reason):
        if name == "fft":
            return _fft(f, g, n, epsilon, mode, rtol, max_grid), reason
        try:
            return FAMILY_EVALUATORS[name](f, g, n, epsilon, mode, rtol, max_grid), None
        except ResourceLimitError as e:
            if e.parameter in ("max_seconds", "max_memory_gb"):
                raise
            if name == "exact":
                reason = f"exact work budget exceeded ({e}); certified FFT engine used"
    raise AssertionError("unreachable: the FFT engine ends every selection")  # pragma: no cover


def max_delta(families, n: int, epsilon: float, mode: str = "spread", rtol: float = DEFAULT_RTOL,
              max_grid: int = DEFAULT_MAX_GRID, evaluator: str = DEFAULT_EVALUATOR) -> tuple[float, dict]:
    """Maximum over GPARV families of the certified δ at one (n, ε).

    Parameters
    ----------
    families : sequence
        Objects with ``.gparv(epsilon)`` (decompositions, Laplace families, mixtures).
    n : int
        Number of users.
    epsilon : float
        Central ε (nats).
    mode : str
        ``"spread"`` (certified upper bound) or ``"spread_lower"`` (certified lower bound); the exact
        evaluator reads them as upper / lower.
    rtol, max_grid, evaluator
        See :func:`delta`.

    Returns
    -------
    (float, dict)
        The maximum and the evaluation record of the maximising family (``pair`` is its label,
        ``delta_error`` the evaluator's error bound, ``fallback`` the reason if the exact evaluator
        fell back to the FFT engine).
    """
    best, info = 0.0, None
    for f in families:
        check_time("delta evaluation")
        ev, fallback = _evaluate(f, epsilon, n, mode, rtol, max_grid, evaluator)
        if info is None or ev.delta > best:
            best, info = ev.delta, ev.to_dict()
            info["pair"] = getattr(f, "label", "")
            info["delta_error"] = ev.charged
            if fallback:
                info["fallback"] = fallback
    return best, info


def estimator(families, n: int):
    """Cheap uncertified ``ε ↦ δ`` estimate (saddle point) used only to place the first root bracket.

    Parameters
    ----------
    families : sequence of GparvFamily
        The mechanism's decompositions (cases); each maps ε to a GPARV via ``gparv(epsilon)``.
    n : int
        Number of users, >= 1.

    Returns
    -------
    callable
        ``est(epsilon) -> float``: the largest saddle-point estimate of δ over the families
        (ε in nats).  Never a certified number.
    """
    def est(e):
        return max(saddle_estimate(f.gparv(e), n) for f in families)
    return est
