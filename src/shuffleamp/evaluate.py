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
from . import fft_engine as _fft_engine
from .fft_engine import DEFAULT_MAX_GRID, saddle_estimate
from .results import Evaluation

__all__ = ["max_delta", "estimator", "selection", "plan", "search_cost", "max_atoms", "binary_rr_plan", "Cost",
           "FamilyEvaluator", "FAMILY_EVALUATORS", "COST_MODEL_DOC", "DEFAULT_RTOL", "DEFAULT_RTOL_LOWER",
           "LOWER_MODE", "continuous_plan", "delta_continuous", "convex_plan", "delta_convex", "spectral_budget",
           "delta_fft"]

#: Default relative δ accuracy for upper bounds (spread rounding) and lower bounds (floor rounding).
DEFAULT_RTOL = 1e-3
DEFAULT_RTOL_LOWER = 1e-4
#: Discretisation of lower bounds: spread minus its certified bias (see fft_engine._spread_bias_bound).
LOWER_MODE = "spread_lower"
#: Largest ε (nats) at which :func:`max_delta` evaluates a family: beyond it e^ε would overflow the GPARV atoms
#: (a - e^ε b)/c; above it δ is bounded by its value there (non-increasing in ε), 0 for pairs of smaller losses.
EVAL_EPSILON_MAX = 500.0


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
#: A continuous part (:func:`delta_continuous`): from this n on the continuous-part Bromwich integral is tried
#: first (cheap there unless a heavy atom dominates the tilted law) ...
CONTINUOUS_EXACT_MIN_N = 300
#: ... when its estimated central work (``exact.bromwich_work``) is at most this many atom-frequency
#: evaluations, and within that work cap (a deterministic rule: the same answer on a loaded machine) ...
CONTINUOUS_EXACT_WORK = 1e6
#: ... and when theta x (width of the continuous part) is at most this (the closed-form MGF's exponent);
#: otherwise the convex order (:func:`delta_convex`).
CONTINUOUS_EXACT_EXPONENT = 600.0
#: The convex order (:func:`delta_convex`): at small n a law the multinomial enumeration evaluates, when it
#: can have at least this many atoms (fewer would be too coarse: the default law and its Bromwich integral) ...
CONVEX_ENUM_MIN_ATOMS = 12
#: ... and at most this many.
CONVEX_ENUM_MAX_ATOMS = 160
#: The cost rule of :func:`delta_convex`: the first law's evaluation runs within this many atom-frequency
#: evaluations (a deterministic count; enumerations weighted by ``exact.WORK_PER_MITM_POINT`` /
#: ``exact.WORK_PER_COUNT_VECTOR``); beyond, a medium law and the coarse laws of ``exact.coarse_convex``
#: (evaluated exactly) instead.
CONVEX_FINE_WORK = 1.5e6
#: Beyond that cap, the better of a law of this many cells per piece (and as many equal-width cells),
#: evaluated within the same cap, and of the coarse laws.
CONVEX_MEDIUM_CELLS = 12
#: The FFT engine's route (:func:`spectral_budget`, ``evaluator="auto"``): the spectral evaluator for lattice
#: laws of at most this many grid atoms (its cost is atoms x frequencies; binned continuous GPARVs go
#: through the FFT of their dense pmf) ...
SPECTRAL_MAX_ATOMS = 4096
#: ... within this many frequencies (beyond, it declines and the inverse FFT answers).
SPECTRAL_MAX_POINTS = 2**21
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
continuous part: Bromwich integral     ``CONTINUOUS_EXACT_MIN_N``, ``CONTINUOUS_EXACT_WORK``,
or convex order                        ``CONTINUOUS_EXACT_EXPONENT`` (here, :func:`continuous_plan`; cost
(:func:`delta_continuous`)             estimate ``exact.bromwich_work``)
convex order: which law, which cap     ``CONVEX_ENUM_MIN_ATOMS``, ``CONVEX_ENUM_MAX_ATOMS``,
(:func:`delta_convex`)                 ``CONVEX_FINE_WORK``, ``CONVEX_MEDIUM_CELLS`` (here,
                                       :func:`convex_plan`; cost estimates ``exact.enumerable_atoms``,
                                       the refusal's ``nodes_needed``); inside one law's evaluation
                                       ``exact.CONVEX_RTOL``, ``exact.CONVEX_RETRY_ERR``,
                                       ``exact.CONVEX_FINE_NODES``, ``exact.ZERO_SPLIT_*`` (accuracy)
FFT engine: spectral or FFT            ``SPECTRAL_MAX_ATOMS``, ``SPECTRAL_MAX_POINTS`` (here,
                                       :func:`spectral_budget`)
exact: refuse -> FFT engine            ``exact.MAX_WORK``, ``exact.WORK_RATE`` (:func:`shuffleamp.exact.work_cap`:
                                       a quarter of the call's time left at that rate), ``exact.TAIL_WORK``
exact: enumeration                     ``exact.ENUMERATE_MAX`` count vectors (:func:`_exact_atoms_cost`)
exact: binomial mixture                ``kernels.MIXTURE_ENUM_FIRST`` and the step budget ``MIX_*`` of
                                       ``_ext/_mixture.pxi`` (laws of at most 7 atoms)
exact: meet in the middle              ``kernels.small_n_chosen`` (n <= 64, <= 2.5e5 points, < 1/4 of the
                                       enumeration), ``kernels.pruned_chosen`` (n <= 128, cap
                                       ``kernels.PRUNED_POINT_CAP``) in ``_ext/_small_n.pxi``
binary RR: count law / decomposition   ``SKIP_DECOMPOSITION_RTOL``, ``DECOMPOSITION_MAX_N``,
                                       ``DECOMPOSITION_MAX_EPS0``, ``LOWER_BAND_RTOL`` (here,
                                       :func:`binary_rr_plan`)
lower search over several datasets:    ``search.SCREEN_RTOL`` (the others' bounds after the lead dataset's
the lead alone, the others bounded     search in ``kernels.epsilon_search``: Chernoff bound, then the Bromwich
                                       integral at this tolerance, then the default evaluation)
a whole search refused up front        ``ATOM_NODE_SECONDS``, ``NODES_PER_EVALUATION``,
                                       ``EVALUATIONS_PER_SEARCH`` (here, :func:`search_cost`)
=====================================  ==========================================================================

Every choice among Python evaluators is made here, from the evaluators' cost estimates; :mod:`shuffleamp.exact`
and :mod:`shuffleamp.fft_engine` only evaluate (and refuse beyond the work cap they are given).  The compiled
kernels make the choices inside one exact evaluation of a finite law (enumeration, binomial mixture, meet in
the middle, Bromwich integral) from the enumeration mask and caps passed to them; their constants are listed
here so that a maintainer finds every threshold of the cost model in one place.
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
    """Cost of the continuous-part evaluator: at most :data:`CONTINUOUS_EXACT_WORK` atom-node evaluations."""
    k = int(g.values.size) if g is not None else 0
    return Cost(CONTINUOUS_EXACT_WORK * ATOM_NODE_SECONDS, max(k, 1) * ATOM_BYTES)


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
    law in convex order (certified side) evaluated as atoms (:func:`delta_continuous`)."""
    return delta_continuous(g, n, mode=mode)


def _budget_refusal(e: ResourceLimitError) -> bool:
    """True when a refusal is the enclosing call's time or memory budget (it ends the call; any other refusal
    is an evaluator's work cap, and the policy tries the next evaluator)."""
    return e.parameter in ("max_seconds", "max_memory_gb")


def continuous_plan(g, n: int):
    """The evaluators of a GPARV with a continuous part, in the order tried, and the prepared law:
    ``(("bromwich", "convex"), law)`` or ``(("convex",), None)``.

    The continuous-part Bromwich integral (``exact.delta_continuous_bromwich``) first when
    ``n >= CONTINUOUS_EXACT_MIN_N``, the law is supported (``exact.unsupported_reason``) with a positive
    atom, its closed-form MGF stays in range at the tilt (``exact.mgf_exponent`` at most
    :data:`CONTINUOUS_EXACT_EXPONENT`) and its estimated central work (``exact.bromwich_work``) is at most
    :data:`CONTINUOUS_EXACT_WORK`; the convex order (:func:`delta_convex`) otherwise and when the integral
    exceeds that cap.  The rule depends only on (G, n), never on the machine's load.
    """
    n = int(n)
    if n >= CONTINUOUS_EXACT_MIN_N and _exact.unsupported_reason(g) is None and g.support[1] > 0.0:
        law = _exact.continuous_law(g, n)
        if (_exact.mgf_exponent(law, g) <= CONTINUOUS_EXACT_EXPONENT
                and _exact.bromwich_work(law) <= CONTINUOUS_EXACT_WORK):
            return ("bromwich", "convex"), law
    return ("convex",), None


def delta_continuous(g, n: int, mode: str = "upper") -> Evaluation:
    r"""Certified :math:`\tfrac1n E[(\sum_{i\le n} G_i)_+]` of a GPARV with a continuous part, by the evaluators
    of :func:`continuous_plan` in order (the continuous-part integral within :data:`CONTINUOUS_EXACT_WORK`,
    else :func:`delta_convex`).  Both are certified on the side of ``mode`` (as in
    :func:`shuffleamp.exact.delta_exact`).

    Raises
    ------
    ResourceLimitError
        The enclosing call's time or memory budget is spent (parameter ``max_seconds`` / ``max_memory_gb``),
        or the convex order exceeds its work cap.
    """
    n = int(n)
    names, law = continuous_plan(g, n)
    if names[0] == "bromwich":
        try:
            return _exact.delta_continuous_bromwich(law, n, mode, CONTINUOUS_EXACT_WORK)
        except ResourceLimitError as e:
            if _budget_refusal(e):
                raise
    return delta_convex(g, n, mode)


def convex_plan(g, n: int, enumerate_max: int | None = None) -> tuple[str, ...]:
    """The convex-order laws of :func:`delta_convex`, in the order tried: ``"enumerated"`` (a law of at most
    ``exact.enumerable_atoms`` atoms, when that is at least :data:`CONVEX_ENUM_MIN_ATOMS`: small n) or
    ``"default"`` (the default cells), each within :data:`CONVEX_FINE_WORK`; then ``"medium-coarse"`` (the
    better of a law of :data:`CONVEX_MEDIUM_CELLS` cells within the same cap and the coarse laws evaluated
    exactly) and ``"uncapped"`` (the first law without the cap).  ``"enumerated"`` gives way to
    ``"default"`` when no law of that size exists (``exact.convex_enumerated_law``)."""
    enumerate_max = _exact.ENUMERATE_MAX if enumerate_max is None else enumerate_max
    kmax = _exact.enumerable_atoms(int(n), enumerate_max, CONVEX_ENUM_MAX_ATOMS)
    first = ("enumerated", "default") if kmax >= CONVEX_ENUM_MIN_ATOMS else ("default",)
    return (*first, "medium-coarse", "uncapped")


def delta_convex(g, n: int, mode: str = "upper", rtol: float | None = None,
                 enumerate_max: int | None = None) -> Evaluation:
    r"""Certified :math:`\tfrac1n E[(\sum_{i\le n} G_i)_+]` of a GPARV with a continuous part, via a finite law
    in convex order (``exact.convex_order_atoms``: a mean-preserving spread for upper bounds, cell
    conditional means for lower bounds; the step only moves δ in the certified direction).

    The laws of :func:`convex_plan` in order: the first (enumerated at small n, else the default cells)
    within :data:`CONVEX_FINE_WORK` atom-frequency evaluations; when it needs more, the better certified
    value of a law of :data:`CONVEX_MEDIUM_CELLS` cells per piece (same cap; skipped when the nodes the
    first law needed already exceed the cap at its size) and of the coarse laws (``exact.coarse_convex``);
    only when neither is available the first law uncapped.  A deterministic rule, independent of the load.

    Parameters
    ----------
    g : Gparv
        Law of G with a continuous part (a purely atomic law is evaluated by
        :func:`shuffleamp.exact.delta_exact`).
    n : int
        Number of users, >= 1.
    mode : {"upper", "lower"} (or "spread"/"ceil" resp. "floor"/"spread_lower")
        Certified upper or lower bound.
    rtol : float, optional
        Target relative error bound of each law's evaluation (``exact.convex_evaluation``).
    enumerate_max : int, optional
        As in :func:`shuffleamp.exact.delta_exact`.

    Returns
    -------
    Evaluation
        ``delta`` certified (the rounding of the law's closed-form cell masses and moments is an estimate,
        see ``exact.convex_order_atoms``); ``charged`` the evaluator's error bound (the convex-order gap is
        on the certified side and not included).

    Raises
    ------
    ParameterError
        Unknown ``mode``.
    ResourceLimitError
        As :func:`shuffleamp.exact.delta_exact`.

    References
    ----------
    Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
    Shuffling", IEEE S&P 2026 (arXiv:2504.07414), Theorems 12–13 (δ as a functional of G);
    M. Shaked, J. G. Shanthikumar, "Stochastic Orders", Springer 2007, Section 3.A (the convex order
    is closed under convolution).
    """
    enumerate_max = _exact.ENUMERATE_MAX if enumerate_max is None else enumerate_max
    upper = _exact.upper_mode(mode)
    n = int(n)
    if g.continuous is None or g.continuous.mass <= 0:
        return _exact.delta_exact(g, n, mode, _exact.CONVEX_RTOL if rtol is None else rtol, enumerate_max)
    zero = _exact.convex_zero(g, mode)
    if zero is not None:
        return zero
    law = None
    names = convex_plan(g, n, enumerate_max)
    if names[0] == "enumerated":
        kmax = _exact.enumerable_atoms(n, enumerate_max, CONVEX_ENUM_MAX_ATOMS)
        law = _exact.convex_enumerated_law(g, n, upper, kmax)
    default = law is None
    if default:
        law = _exact.convex_law(g, n, upper)
    try:
        return _exact.convex_evaluation(g, n, law, upper, default, rtol, enumerate_max, CONVEX_FINE_WORK)
    except ResourceLimitError as e:
        if _budget_refusal(e):
            raise
        need = getattr(e, "nodes_needed", 0.0)
    best = _exact.coarse_convex(g, n, upper)
    medium = _exact.convex_law(g, n, upper, CONVEX_MEDIUM_CELLS, CONVEX_MEDIUM_CELLS)
    if medium[0].size < law[0].size and need * medium[0].size <= CONVEX_FINE_WORK:
        # (skipped when the nodes the first law needed already exceed the cap: the node count hardly depends on
        # the atoms)
        try:
            ev = _exact.convex_evaluation(g, n, medium, upper, False, rtol, enumerate_max, CONVEX_FINE_WORK)
            if best is None or (ev.delta < best.delta if upper else ev.delta > best.delta):
                best = ev
        except ResourceLimitError as e:
            if _budget_refusal(e):
                raise
    if best is not None:
        return best
    return _exact.convex_evaluation(g, n, law, upper, default, rtol, enumerate_max, None)


def spectral_budget(atoms: int, N: int) -> int:
    """The FFT engine's route (``evaluator="auto"``): the spectral evaluator's frequency budget for a lattice
    law of ``atoms`` grid atoms on a window of ``N`` points, :data:`SPECTRAL_MAX_POINTS` when
    ``atoms <= SPECTRAL_MAX_ATOMS`` (and ``N < 2**31``), else 0 (the inverse FFT).  The spectral evaluator
    declines beyond its budget, and the FFT answers."""
    return SPECTRAL_MAX_POINTS if atoms <= SPECTRAL_MAX_ATOMS and N < 2**31 else 0


def delta_fft(g, n: int, mode: str = "spread", rtol: float = 1e-3, max_grid: int = DEFAULT_MAX_GRID,
              l: float | None = None, evaluator: str = "auto") -> Evaluation:
    """The certified FFT engine (:func:`shuffleamp.fft_engine.delta_fft`) with ``evaluator`` "spectral", "fft" or
    "auto": the route of :func:`spectral_budget`.  Parameters, returns and errors as there."""
    route = spectral_budget if evaluator == "auto" else evaluator
    return _fft_engine.delta_fft(g, n, mode, rtol, max_grid, l, evaluator=route)


def _exact_atoms(f, g, n, epsilon, mode, rtol, max_grid):
    """The exact evaluator of a finite law, no discretisation: :func:`shuffleamp.exact.delta_exact_family` (the
    compiled loop for atomic decompositions) or :func:`shuffleamp.exact.delta_exact`; within it enumeration,
    meet in the middle, the binomial mixture or the Bromwich integral by the rules listed in
    :data:`COST_MODEL_DOC`."""
    if g is None:
        return _exact.delta_exact_family(f, n, epsilon, mode=mode)
    return _exact.delta_exact(g, n, mode=mode)


def _fft(f, g, n, epsilon, mode, rtol, max_grid):
    """The certified FFT engine (:func:`delta_fft`, the route "auto" of :func:`spectral_budget`)."""
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
            if _budget_refusal(e):
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
    if epsilon > EVAL_EPSILON_MAX:
        # e^ε overflows the GPARV atoms beyond here.  δ(ε) of a pair is non-increasing in ε, so the certified
        # upper value at EVAL_EPSILON_MAX bounds it (every finite pair's δ is 0 there: its largest loss is
        # smaller; left are the infinite-loss atoms), and 0 is a certified lower value
        if not _exact._is_upper(mode):
            return 0.0, {"value": 0.0, "pair": "", "delta_error": 0.0,
                         "note": f"epsilon > {EVAL_EPSILON_MAX:g}: lower bound 0"}
        best, info = max_delta(families, n, EVAL_EPSILON_MAX, mode, rtol, max_grid, evaluator)
        if info is not None:
            info["note"] = f"epsilon > {EVAL_EPSILON_MAX:g}: the upper value at epsilon = {EVAL_EPSILON_MAX:g} " \
                           "(delta is non-increasing in epsilon)"
        return best, info
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
