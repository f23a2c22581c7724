"""Shared numerics: the one conservative root search used by every inverse query.

:func:`inverse_monotone` inverts a monotone, *certified* function at a target, in the spirit of
``dp_accounting``'s ``inverse_monotone_function``: it returns the evaluated point nearest the
boundary on each side, so the answer is certified by its own evaluation and never relies on
monotonicity (monotonicity only makes the search fast and tight).  Every inverse query of the
package uses it: ε(δ) of :func:`shuffleamp.epsilon` (optimal and comparison methods),
the inversion of the Feldman–McMillan–Talwar closed form, the μ-GDP ε, and the planning
queries :func:`shuffleamp.planning.max_eps0` / :func:`shuffleamp.planning.min_n` (integer search).

:class:`LogMgf` is the one log-MGF of a finite law used by both δ evaluators
(:mod:`shuffleamp.fft_engine` and :mod:`shuffleamp.exact`): a thin wrapper over the compiled kernel
(``log_mgf``, ``tilted_moments``, ``tilted_weights``, ``saddle_point``).

:class:`Budget` is the one time / memory budget of a public call (``max_seconds``,
``max_memory_gb`` of :func:`shuffleamp.delta` / :func:`shuffleamp.epsilon`): the public call
installs it with :func:`budget`, and the evaluators ask :func:`check_time` / :func:`check_memory`
before each unit of work, so a call that cannot finish within its budget raises
:class:`~shuffleamp.errors.ResourceLimitError` instead of hanging or running out of memory.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Literal

import numpy as np

from ._ext import kernels
from .errors import ResourceLimitError

__all__ = ["Bracket", "inverse_monotone", "root_of_estimate", "LogMgf", "Budget", "budget", "current_budget",
           "check_time", "check_memory", "check_work", "refuse_if_costly", "check_pld_points"]

#: Default budget of one public call.
DEFAULT_MAX_SECONDS = 10.0
DEFAULT_MAX_MEMORY_GB = 2.0


class Budget:
    """Time and memory budget of one public call.

    Parameters
    ----------
    max_seconds : float
        Wall-clock seconds the call may take.
    max_memory_gb : float
        Largest working memory (GiB) one evaluation may allocate (estimated before allocating).
    """

    def __init__(self, max_seconds: float = DEFAULT_MAX_SECONDS, max_memory_gb: float = DEFAULT_MAX_MEMORY_GB):
        self.max_seconds = float(max_seconds)
        self.max_memory_gb = float(max_memory_gb)
        self.start = time.monotonic()
        self.deadline = self.start + self.max_seconds

    def elapsed(self) -> float:
        """Seconds since the budget was installed."""
        return time.monotonic() - self.start

    def remaining(self) -> float:
        """Seconds left (may be negative)."""
        return self.deadline - time.monotonic()

    def check_time(self, what: str) -> None:
        """Raise ResourceLimitError (parameter ``max_seconds``) once the deadline has passed."""
        if time.monotonic() > self.deadline:
            raise ResourceLimitError(
                f"{what}: exceeded the time budget max_seconds={self.max_seconds:g} "
                f"(raise max_seconds, or lower n or the mechanism's size)",
                parameter="max_seconds", resource="time")

    def check_memory(self, nbytes: float, what: str) -> None:
        """Raise ResourceLimitError (parameter ``max_memory_gb``) if ``nbytes`` exceed the budget."""
        if nbytes > self.max_memory_gb * 2.0 ** 30:
            raise ResourceLimitError(
                f"{what}: would need about {nbytes / 2.0 ** 30:.3g} GiB, more than max_memory_gb="
                f"{self.max_memory_gb:g} (raise max_memory_gb, or lower n or the mechanism's size)",
                parameter="max_memory_gb", resource="memory")


_BUDGET: contextvars.ContextVar = contextvars.ContextVar("shuffleamp_budget", default=None)


@contextlib.contextmanager
def budget(max_seconds: float = DEFAULT_MAX_SECONDS, max_memory_gb: float = DEFAULT_MAX_MEMORY_GB):
    """Install a :class:`Budget` for the duration of a ``with`` block (an enclosing one is kept if tighter)."""
    outer = _BUDGET.get()
    b = Budget(max_seconds, max_memory_gb)
    if outer is not None:
        b.deadline = min(b.deadline, outer.deadline)
        b.max_memory_gb = min(b.max_memory_gb, outer.max_memory_gb)
    token = _BUDGET.set(b)
    try:
        yield b
    finally:
        _BUDGET.reset(token)


def current_budget() -> Budget | None:
    """The budget installed by the enclosing public call, or None."""
    return _BUDGET.get()


def check_time(what: str) -> None:
    """Raise ResourceLimitError if the enclosing call's time budget is spent (no-op without one)."""
    b = _BUDGET.get()
    if b is not None:
        b.check_time(what)


def check_work(seconds: float, what: str) -> None:
    """Raise ResourceLimitError (``max_seconds``) if work estimated at ``seconds`` exceeds the time left."""
    b = _BUDGET.get()
    if b is not None and seconds > b.remaining():
        raise ResourceLimitError(
            f"{what}: estimated {seconds:.3g} s, more than the time left in max_seconds={b.max_seconds:g} "
            f"(raise max_seconds, or lower n or the mechanism's size)", parameter="max_seconds", resource="time")


#: Cost model of a privacy-loss distribution on a grid (``dp_accounting`` PMFs and their FFT compositions):
#: bytes and seconds per grid point of the result.  Peak working memory of ``self_convolve``: 72 B/point;
#: time (CPU, one core): the FFT self-composition (2.6e-7 s/point) plus ``get_epsilon_for_delta``'s Python
#: pass over the result (1.1e-7 s/point), measured at 9.6e6 and 8e7 points (bench/results_limits.md).
#: A loaded machine's wall clock can be several times longer.
PLD_POINT_BYTES = 80.0
PLD_POINT_SECONDS = 4e-7


def _active() -> Budget:
    """The enclosing call's budget, or the default one (so that an up-front estimate always has a limit)."""
    b = _BUDGET.get()
    return b if b is not None else Budget()


def refuse_if_costly(what: str, parameter: str, *, seconds: float = 0.0, nbytes: float = 0.0,
                     hint: str | None = None) -> None:
    """Up-front refusal of work estimated at ``seconds`` / ``nbytes``, naming the user parameter that drives it.

    The limits are those of the enclosing call's :class:`Budget` (time left, ``max_memory_gb``), or the
    default budget (``DEFAULT_MAX_SECONDS``, ``DEFAULT_MAX_MEMORY_GB``) when none is installed.

    Parameters
    ----------
    what : str
        The work, for the message.
    parameter : str
        The user parameter whose value drives the cost (``"rounds"``, ``"groups"``, ...).
    seconds, nbytes : float
        Estimated time (s) and peak memory (bytes).
    hint : str, optional
        What to do (default ``"lower <parameter>"``).

    Raises
    ------
    ResourceLimitError
        With ``parameter`` and ``resource`` ("memory" or "time").
    """
    b = _active()
    hint = hint or f"lower {parameter}"
    if not nbytes <= b.max_memory_gb * 2.0 ** 30:
        raise ResourceLimitError(
            f"{what}: would need about {nbytes / 2.0 ** 30:.3g} GiB, more than max_memory_gb={b.max_memory_gb:g}; "
            f"{hint}, or raise max_memory_gb", parameter=parameter, resource="memory")
    if not seconds <= b.remaining():
        raise ResourceLimitError(
            f"{what}: estimated {seconds:.3g} s, more than the {max(b.remaining(), 0.0):.3g} s left of the time "
            f"budget max_seconds={b.max_seconds:g}; {hint}, or raise max_seconds", parameter=parameter,
            resource="time")


def check_pld_points(points: float, what: str, parameter: str) -> None:
    """:func:`refuse_if_costly` for a PLD (or a composition's result) of ``points`` grid points."""
    hint = "raise value_discretization_interval" if parameter == "value_discretization_interval" else None
    refuse_if_costly(what, parameter, seconds=points * PLD_POINT_SECONDS, nbytes=points * PLD_POINT_BYTES,
                     hint=hint)


def check_memory(nbytes: float, what: str) -> None:
    """Raise ResourceLimitError if ``nbytes`` exceed the enclosing call's memory budget.

    Without an installed budget the default (``DEFAULT_MAX_MEMORY_GB``) applies, so no evaluation
    allocates without bound.
    """
    b = _BUDGET.get()
    (b if b is not None else Budget()).check_memory(nbytes, what)


@dataclass(frozen=True)
class Bracket:
    """Final bracket of :func:`inverse_monotone`.

    Attributes
    ----------
    feasible : float or int or None
        Evaluated point with ``fn <= target`` nearest the boundary (None if none was found).
    infeasible : float or int or None
        Evaluated point with ``fn > target`` nearest the boundary (None if none was found).
    feasible_value, infeasible_value : float or None
        ``fn`` at those points.
    feasible_info, infeasible_info : object
        The ``info`` returned by ``fn`` at those points.
    evaluations : int
        Number of distinct points at which ``fn`` was evaluated.
    """

    feasible: float | int | None
    infeasible: float | int | None
    feasible_value: float | None
    infeasible_value: float | None
    feasible_info: Any
    infeasible_info: Any
    evaluations: int


def inverse_monotone(fn: Callable[[Any], tuple[float, Any]], target: float, lo, hi, *,
                     increasing: bool = False, side: Literal["upper", "lower"] = "upper",
                     rel_tol: float = 1e-7, abs_tol: float = 0.0,
                     scale: Literal["linear", "log", "integer"] = "linear",
                     estimate: Callable[[float], float] | None = None, accelerate: bool = False,
                     expand: bool = False, expand_factor: float = 2.0, limit=None) -> Bracket:
    r"""Invert a monotone certified function: the boundary of ``{x in [lo, hi] : fn(x) <= target}``.

    Parameters
    ----------
    fn : callable
        ``fn(x) -> (value, info)``; ``value`` is a certified bound (upper or lower, see ``side``)
        of a quantity monotone in ``x``.  Each distinct ``x`` is evaluated once (memoised).
    target : float
        ``x`` is *feasible* when ``value <= target``.
    lo, hi : float or int
        Search interval.  With ``expand=True``, ``hi`` is the first guess and is multiplied by
        ``expand_factor`` (up to ``limit``) until the boundary is bracketed.
    increasing : bool
        False: ``fn`` decreases in ``x`` (feasible set ``[x*, hi]``, e.g. δ(ε), δ(n)).
        True: ``fn`` increases (feasible set ``[lo, x*]``, e.g. δ(ε0)).
    side : {"upper", "lower"}
        Which end is certified when ``fn`` is not monotone in floating point: ``"upper"`` keeps the
        feasible point nearest the first feasible one found (the value is a certified upper bound,
        each feasible point certifies itself); ``"lower"`` keeps the infeasible point nearest the
        last infeasible one (the value is a certified lower bound).
    rel_tol, abs_tol : float
        Stop when the bracket is narrower than ``max(rel_tol * |left end|, abs_tol)`` (linear scale),
        when ``right / left - 1 <= rel_tol`` (log scale), or when the two ends are adjacent integers
        (integer scale: the exact boundary).
    scale : {"linear", "log", "integer"}
        How midpoints are taken (arithmetic, geometric, integer floor).
    estimate : callable, optional
        Cheap uncertified ``estimate(x) ≈ value`` (decreasing ``fn`` on a linear scale only): its root,
        found by ``scipy.optimize.brentq``, places the first bracket (x ± 3%, widened by doubling).
    accelerate : bool
        Shrink the bracket by ``brentq`` on ``log(value) - log(target)`` before bisecting (smooth
        functions); every point brentq evaluates is a candidate end like any other.

    Returns
    -------
    Bracket
        Evaluated feasible and infeasible ends.  A feasible end is None only if no feasible point
        exists in the searched range; an infeasible end is None if ``lo`` itself is feasible
        (decreasing) or ``hi`` is (increasing).
    """
    values: dict = {}
    infos: dict = {}

    def clamp(x):
        if scale == "integer":
            return int(x)
        return float(min(max(x, lo), hi_lim))

    hi_lim = limit if (expand and limit is not None) else hi

    def f(x):
        x = clamp(x)
        if x not in values:
            values[x], infos[x] = fn(x)
        return values[x]

    def ok(x) -> bool:
        return f(x) <= target

    # orientation: work in "decreasing" form, feasible above the boundary
    sign = -1 if increasing else 1

    def result() -> Bracket:
        okp = [x for x, v in values.items() if v <= target]
        bad = [x for x, v in values.items() if v > target]
        if not increasing:
            if side == "upper":
                fe = min(okp, default=None)
                ib = max([x for x in bad if fe is None or x < fe], default=None)
            else:
                ib = max(bad, default=None)
                fe = min([x for x in okp if ib is None or x > ib], default=None)
        else:
            if side == "upper":
                fe = max(okp, default=None)
                ib = min([x for x in bad if fe is None or x > fe], default=None)
            else:
                ib = min(bad, default=None)
                fe = max([x for x in okp if ib is None or x < ib], default=None)
        return Bracket(fe, ib, values.get(fe), values.get(ib), infos.get(fe), infos.get(ib), len(values))

    xtol = [abs_tol]

    def narrow_enough(a, b) -> bool:
        a, b = min(a, b), max(a, b)
        if scale == "integer":
            return b - a <= 1
        if scale == "log":
            return b / a - 1 <= rel_tol
        return b - a <= xtol[0]

    def mid(a, b):
        if scale == "integer":
            return (a + b) // 2
        if scale == "log":
            return math.sqrt(a * b)
        return 0.5 * (a + b)

    # ---- 1. bracket: b_bad (infeasible side) and b_ok (feasible side)
    if estimate is not None and not increasing and scale == "linear":
        b_bad, b_ok = _estimate_bracket(f, ok, target, lo, hi, estimate)
        if b_bad is None or b_ok is None:
            return result()
    elif expand:
        # decreasing: lo infeasible assumed, grow hi; increasing: lo feasible, grow hi
        a, b = lo, hi
        while ok(b) != (not increasing):
            if limit is not None and b >= limit:
                return result()
            a, b = b, (min(b * expand_factor, limit) if limit is not None else b * expand_factor)
        b_bad, b_ok = (a, b) if not increasing else (b, a)
    else:
        first_ok = ok(hi) if not increasing else ok(lo)
        if not first_ok:
            return result()
        other = lo if not increasing else hi
        if ok(other):
            return result()
        b_bad, b_ok = (lo, hi) if not increasing else (hi, lo)

    # ---- 2. optional acceleration by brentq inside the bracket
    xtol[0] = max(rel_tol * min(b_bad, b_ok), abs_tol)   # relative to the first bracket's left end
    if accelerate and scale == "linear":
        from scipy.optimize import brentq

        def phi(x):
            return sign * (math.log(max(f(x), 1e-300)) - math.log(target))

        try:
            brentq(phi, min(b_bad, b_ok), max(b_bad, b_ok), xtol=xtol[0], rtol=1e-12, maxiter=100)
        except (ValueError, RuntimeError):  # pragma: no cover - defensive
            pass
        br = result()
        if br.infeasible is not None:
            b_bad = br.infeasible
        b_ok = br.feasible if br.feasible is not None else (hi if not increasing else lo)

    # ---- 3. bisection to the tolerance, keeping the evaluated ends
    while not narrow_enough(b_bad, b_ok):
        m = mid(b_bad, b_ok)
        if m in (b_bad, b_ok):
            break
        if ok(m):
            b_ok = m
        else:
            b_bad = m
    return result()


def epsilon_for_delta(fn: Callable[[float], tuple[float, Any]], target: float, eps_hi: float, side: str,
                      rel_tol: float, estimate=None) -> tuple[float, Any, int]:
    """Conservative ε of a decreasing certified δ-bound ``fn(ε) -> (δ, info)`` on [0, ``eps_hi``].

    The one privacy-side use of :func:`inverse_monotone` (shared by :func:`shuffleamp.search.solve_epsilon`
    and the personalized populations).

    Parameters
    ----------
    fn : callable
        ``fn(eps) -> (delta, info)``, non-increasing in ``eps``; certified upper (``side="upper"``) or
        lower (``side="lower"``) δ.
    target : float
        Target δ.
    eps_hi : float
        Upper end of the search (ε0: δ(ε0) = 0 for a pure ε0-LDP randomizer).
    side : {"upper", "lower"}
        Which certified bound ``fn`` gives.
    rel_tol : float
        Relative width of the final bracket.
    estimate : float, optional
        A guess of the answer to start the bracket from.

    Returns
    -------
    eps : float
        ``side="upper"``: the smallest evaluated ε with ``fn(ε) <= target`` (each such ε is certified on
        its own; ``eps_hi`` if none). ``side="lower"``: the largest evaluated ε with a certified lower δ
        above the target, else 0.
    info : object
        The ``info`` of that evaluation (None if there is none).
    evaluations : int
        Number of calls of ``fn``.
    """
    br = inverse_monotone(fn, target, 0.0, eps_hi, side=side, rel_tol=rel_tol, abs_tol=1e-12 * eps_hi,
                          estimate=estimate, accelerate=True)
    if side == "upper":
        if br.feasible is None:      # cannot happen for pure ε0-LDP (δ(ε0) = 0); be conservative
            return eps_hi, br.infeasible_info, br.evaluations
        return br.feasible, br.feasible_info, br.evaluations
    if br.infeasible is None:
        return 0.0, br.feasible_info if br.feasible == 0.0 else None, br.evaluations
    return br.infeasible, br.infeasible_info, br.evaluations


def root_of_estimate(estimate: Callable[[float], float], target: float, lo: float, hi: float, xtol: float,
                     maxiter: int = 100) -> float | None:
    """Root in (``lo``, ``hi``) of ``log estimate(x) = log target`` for a decreasing, uncertified estimate.

    The one placement of a search by an estimate (``scipy.optimize.brentq``): the first bracket of
    :func:`inverse_monotone`, the walk of the ε search near ε0 and the screening ε of the optimal bound.  Never
    a certified number.

    Parameters
    ----------
    estimate : callable
        ``estimate(x) -> float``, decreasing (e.g. a saddle-point estimate of δ(ε)).
    target : float
        Target value (> 0).
    lo, hi : float
        Interval; the estimate must be above ``target`` at ``lo`` and below it at ``hi``.
    xtol : float
        Absolute tolerance of the root.
    maxiter : int
        Iteration cap of brentq.

    Returns
    -------
    float or None
        The root, or None when the estimate does not cross ``target`` in the interval or brentq fails.
    """
    from scipy.optimize import brentq

    def pe(e):
        return math.log(max(estimate(e), 1e-300)) - math.log(target)
    try:
        if pe(lo) > 0 > pe(hi):
            return float(brentq(pe, lo, hi, xtol=xtol, maxiter=maxiter))
    except (ValueError, RuntimeError, ArithmeticError):  # pragma: no cover - defensive
        pass
    return None


def _estimate_bracket(f, ok, target, lo, hi, estimate):
    """First bracket of a decreasing search from an uncertified estimate (x ± 3%, widened by doubling)."""
    guess = root_of_estimate(estimate, target, lo, hi, 1e-6 * hi)
    if guess is None or not (lo < guess < hi):
        guess = 0.5 * (lo + hi)
    a, b = guess * 0.97, min(guess * 1.03, hi)
    step = 0.03 * guess
    while a > lo and ok(a):
        b, step = a, 2.0 * step
        a = max(a - step, lo)
    if a <= lo and ok(lo):
        return None, None
    while b < hi and not ok(b):
        a, step = b, 2.0 * step
        b = min(b + step, hi)
    if not ok(b):
        return None, None
    return a, b


class LogMgf:
    r"""Log-MGF :math:`K(t) = \log E[e^{tX}]` of a finite law and its tilted law.

    Parameters
    ----------
    x : array_like of float, shape (K,)
        Atoms (values of G, or integer grid indices of a discretised G).
    w : array_like of float, shape (K,)
        Non-negative masses; normalised here (``w / w.sum()``) once.

    Attributes
    ----------
    x, p : ndarray of float64, shape (K,)
        Contiguous atoms and normalised masses passed to the kernels.

    Notes
    -----
    ``K(t)`` uses the ``log1p``/``expm1`` form when :math:`\max_j |t x_j| < 0.5` (relative accuracy
    in K itself, so that :math:`nK(t)` stays accurate at :math:`n = 10^9`) and a max-shifted
    log-sum-exp otherwise.
    """

    __slots__ = ("x", "p")

    def __init__(self, x, w):
        self.x = np.ascontiguousarray(x, dtype=np.float64)
        w = np.asarray(w, dtype=np.float64)
        self.p = np.ascontiguousarray(w / w.sum())

    def __call__(self, t: float) -> float:
        """K(t) (float)."""
        return kernels.log_mgf(self.x, self.p, float(t))

    def moments(self, t: float) -> tuple[float, float]:
        """(K'(t), K''(t)): mean and variance of the law tilted by :math:`e^{tx}`.

        Parameters
        ----------
        t : float
            Tilt (real).

        Returns
        -------
        mean, variance : float
            :math:`K'(t)` and :math:`K''(t)`.
        """
        return kernels.tilted_moments(self.x, self.p, float(t))

    def tilted(self, t: float) -> np.ndarray:
        """Masses of the tilted law, :math:`p_j e^{t x_j} / M(t)`.

        Parameters
        ----------
        t : float
            Tilt (real).

        Returns
        -------
        numpy.ndarray of float64, shape (K,)
            Tilted masses, summing to 1, aligned with ``x``.
        """
        return kernels.tilted_weights(self.x, self.p, float(t))

    def saddle(self, n: float) -> tuple[float, float, float]:
        r"""Saddle point :math:`\theta > 0` of :math:`nK(\theta) - 2\log\theta`, i.e. the root of
        :math:`nK'(\theta) = 2/\theta` (unique when the law has a positive atom).

        Parameters
        ----------
        n : float
            Number of summands.

        Returns
        -------
        theta, mean, variance : float
            The root and :math:`K'(\theta)`, :math:`K''(\theta)`.
        """
        return kernels.saddle_point(self.x, self.p, float(n))
