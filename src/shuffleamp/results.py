"""Typed result objects: :class:`Evaluation` (one δ evaluation of one GPARV, returned by both evaluators)
and the public API's :class:`BoundResult`, :class:`PlanningResult`, :class:`MethodInfo`.

:class:`Evaluation` keeps evaluator-specific details in a typed sub-record (:class:`FftDetail` or
:class:`ExactDetail`), so no FFT field appears when no FFT ran.

This module imports nothing numerical at import time (numpy is imported when a result is
converted), so the command line can use it without loading the kernels.

References
----------
.. [SCW] P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification
   via Shuffling", IEEE S&P 2026 (short version: "A Unified Framework and Efficient Computation
   for Privacy Amplification via Shuffling", arXiv:2504.07414).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Mapping, Union

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    Values = Union[float, "np.ndarray"]
    Counts = Union[int, "np.ndarray"]

__all__ = ["Evaluation", "FftDetail", "ExactDetail", "BoundResult", "PlanningResult", "MethodInfo", "AccountingResult",
           "ExactCountResult", "GroupResult", "PopulationResult", "to_jsonable", "SCHEMA_VERSION", "envelope",
           "error_info", "guarantee"]

#: Version of the JSON document layout produced by :func:`envelope` (every ``--json`` output of the
#: command line). Incremented when a key is renamed or removed; adding keys keeps the version.
SCHEMA_VERSION = 1


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"{old} is deprecated; use {new}", DeprecationWarning, stacklevel=3)


@dataclass(frozen=True)
class FftDetail:
    """How the discretised engine evaluated δ (grid, tilt and window).

    Attributes
    ----------
    l : float
        Grid step (units of G).
    N : int
        FFT length, or virtual window length of the spectral path (0 if nothing was transformed).
    eta : float
        Exponential tilt per grid unit.
    window : tuple of int
        First and last grid index of the window.
    grid_capped : bool
        True if ``max_grid`` forced a coarser grid than ``rtol`` asked for.
    """

    l: float
    N: int
    eta: float
    window: tuple[int, int]
    grid_capped: bool

    def to_dict(self) -> dict:
        """Plain-dict form (``window`` as a list), keys ``l, N, eta, window, grid_capped``.

        Returns
        -------
        dict
            JSON-serialisable mapping of the fields.
        """
        return {"l": self.l, "N": self.N, "eta": self.eta, "window": list(self.window),
                "grid_capped": self.grid_capped}

    def as_dict(self) -> dict:
        """Deprecated alias of :meth:`to_dict`."""
        _deprecated("FftDetail.as_dict", "FftDetail.to_dict")
        return self.to_dict()


@dataclass(frozen=True)
class ExactDetail:
    """How the exact evaluator evaluated δ.

    Attributes
    ----------
    theta : float
        Saddle-point tilt θ of the Bromwich contour (0 when not used: enumeration, trivial cases).
    nodes : int
        Number of integrand (and modulus-bound) evaluations.
    """

    theta: float
    nodes: int

    def to_dict(self) -> dict:
        """Plain-dict form under the keys of the settings' ``grid`` entries: ``eta`` (the tilt θ)
        and ``N`` (the number of integrand evaluations).

        Returns
        -------
        dict
            ``{"N": nodes, "eta": theta}``.
        """
        return {"N": self.nodes, "eta": self.theta}

    def as_dict(self) -> dict:
        """Deprecated alias of :meth:`to_dict`."""
        _deprecated("ExactDetail.as_dict", "ExactDetail.to_dict")
        return self.to_dict()


@dataclass(frozen=True)
class Evaluation:
    """Certified δ of one GPARV, as returned by :func:`shuffleamp.fft_engine.delta_fft` and
    :func:`shuffleamp.exact.delta_exact`.

    Attributes
    ----------
    delta : float
        Certified bound: an upper bound in the upper modes, a lower bound in the lower modes.
    mode : str
        Rounding / side: ``"spread"``, ``"ceil"``, ``"floor"``, ``"spread_lower"`` (discretised
        engine) or ``"upper"``, ``"lower"`` (exact evaluator).
    charged : float
        Error terms charged (added for upper, subtracted for lower bounds), in δ units.
    evaluator : str
        ``"fft"``, ``"spectral"``, ``"exact"``, ``"enumeration"``, ``"binomial-mixture"``, ``"chernoff"``,
        ``"trivial"`` or ``"none"`` (no positive atom: δ = 0).
    detail : FftDetail or ExactDetail or None
        Evaluator-specific details.
    """

    delta: float
    mode: str
    charged: float
    evaluator: str = "none"
    detail: FftDetail | ExactDetail | None = None

    def to_dict(self) -> dict:
        """Plain dict: ``delta, mode, charged, evaluator`` plus the detail's keys (see the sub-records).

        Returns
        -------
        dict
            JSON-serialisable mapping (``grid_capped`` placed last when present).
        """
        extra = self.detail.to_dict() if self.detail is not None else {}
        d = {"delta": self.delta, "mode": self.mode}
        d.update((k, v) for k, v in extra.items() if k != "grid_capped")
        d["charged"] = self.charged
        if "grid_capped" in extra:
            d["grid_capped"] = extra["grid_capped"]
        d["evaluator"] = self.evaluator
        return d

    def as_dict(self) -> dict:
        """Deprecated alias of :meth:`to_dict`."""
        _deprecated("Evaluation.as_dict", "Evaluation.to_dict")
        return self.to_dict()



def to_jsonable(x):
    """``x`` with numpy arrays and scalars converted to lists and Python numbers, recursively.

    Parameters
    ----------
    x : object
        A value of a result field (numbers, arrays, None, and dicts / lists / tuples of them).

    Returns
    -------
    object
        The same value with every numpy array replaced by a list and every numpy scalar by the
        Python number (dicts and sequences are copied; other values are returned unchanged).
    """
    if isinstance(x, dict):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_jsonable(v) for v in x]
    if type(x).__module__ == "numpy":      # numpy is imported only when a numpy value is present
        import numpy as np

        if isinstance(x, np.ndarray):
            return x.tolist()
        if isinstance(x, np.generic):
            return x.item()
    return x


def envelope(command: str | None, inputs: Mapping, result, *, error: Mapping | None = None) -> dict:
    """The one JSON document layout of the command line (and of :mod:`shuffleamp`'s tools that write JSON).

    Every ``--json`` output, success or error, has exactly these top-level keys, in this order.

    Parameters
    ----------
    command : str or None
        The subcommand (``"epsilon"``, ``"delta"``, ``"report"``, ``"compare"``, ``"rounds"``,
        ``"eps0"``, ``"n"``, ...) or the API function that produced the document; None when a
        command line names no subcommand.
    inputs : mapping
        Every parameter as given and parsed (numbers as parsed, defaults filled in).
    result : object
        The answer (a JSON-serialisable mapping); None for an error.
    error : mapping, optional
        :func:`error_info` of the failure; None on success.

    Returns
    -------
    dict
        ``{"schema_version", "version", "command", "inputs", "result", "error"}`` with numpy
        values converted by :func:`to_jsonable`.

    Examples
    --------
    >>> from shuffleamp.results import envelope, SCHEMA_VERSION
    >>> doc = envelope("epsilon", {"n": 1000}, {"epsilon_upper": 0.5})
    >>> list(doc)
    ['schema_version', 'version', 'command', 'inputs', 'result', 'error']
    >>> doc["schema_version"] == SCHEMA_VERSION
    True
    """
    from . import __version__

    return {"schema_version": SCHEMA_VERSION, "version": __version__, "command": command,
            "inputs": to_jsonable(dict(inputs)), "result": to_jsonable(result),
            "error": None if error is None else to_jsonable(dict(error))}


def error_info(exc: BaseException, *, kind: str | None = None) -> dict:
    """The ``error`` member of a failed :func:`envelope`.

    Parameters
    ----------
    exc : BaseException
        The failure.
    kind : str, optional
        Overrides the reported type (the command line uses ``"UsageError"`` for argument errors
        and ``"InternalError"`` for unexpected exceptions).

    Returns
    -------
    dict
        ``type`` (the exception class, e.g. ``"ParameterError"``), ``parameter`` (the user's
        parameter the error names, or None) and ``message`` (the text, with any notes).
    """
    text = str(exc) or type(exc).__name__
    notes = getattr(exc, "__notes__", None) or ()
    message = " ".join([text, *(f"({note})" for note in notes)])
    parameter = getattr(exc, "parameter", None)
    return {"type": kind or type(exc).__name__, "parameter": parameter if isinstance(parameter, str) else None,
            "message": message}


def guarantee(side: str, *, sound: bool = True) -> str:
    """Plain-words name of the guarantee a reported number carries.

    Parameters
    ----------
    side : {"upper", "lower", "estimate"}
        Which number.
    sound : bool, default True
        False for a method whose upper bound is known to be unsound (comparison only).

    Returns
    -------
    str
        ``"certified upper bound"``, ``"certified lower bound"``,
        ``"claimed upper bound, UNSOUND (comparison only)"`` or ``"estimate (not a bound)"`` (with
        ``", UNSOUND (comparison only)"`` appended when ``sound`` is False).
    """
    if side == "estimate":
        return "estimate (not a bound)" + ("" if sound else ", UNSOUND (comparison only)")
    if side == "upper" and not sound:
        return "claimed upper bound, UNSOUND (comparison only)"
    return f"certified {side} bound"


def _short(x) -> str:
    """Compact one-line text of a number, an array, a list or None (for reprs)."""
    if x is None:
        return "None"
    if type(x).__module__ == "numpy":
        import numpy as np

        if isinstance(x, np.ndarray):
            return np.array2string(x, precision=6, threshold=6, separator=", ", max_line_width=10**6)
        x = x.item()
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(_short(v) for v in x[:6]) + (", ..." if len(x) > 6 else "") + "]"
    if isinstance(x, float):
        return format(x, ".6g")
    return repr(x)


@dataclass(frozen=True)
class BoundResult:
    """Named result of :func:`shuffleamp.epsilon` or :func:`shuffleamp.delta`.

    Attributes
    ----------
    quantity : {"epsilon", "delta"}
        What ``upper`` and ``lower`` are.
    upper : float or ndarray of float64 or None
        Upper bound (ε in nats, or δ): certified when ``sound`` is True; a *claimed* bound whose
        proof is known to be broken when ``sound`` is False (variation-ratio).  None for
        ``kind="estimate"``.
    lower : float or ndarray of float64 or None
        Certified lower bound (exact divergence of a concrete neighbouring dataset;
        Su, Cheng, Wang, IEEE S&P 2026, Theorem 14), or None if the method has none (every method except ``"optimal"``).
    method : str
        One of :data:`shuffleamp.bounds.METHODS`.
    n : int or ndarray of int64
        Number of users.
    epsilon, delta : float or ndarray of float64 or None
        The given parameter (the other one is the answer, and None here).
    mechanism : dict
        ``mechanism.describe()``.
    settings : dict
        Numerical settings (evaluator, rtol, the evaluation record ``settings["grid"]`` of the
        optimal method or ``settings["points"]`` of a comparison method, ``settings["regime"]``
        and ``settings["source"]``).  Deterministic (no timings).  ``fft_backend`` and the
        rounding modes appear only when a discretised (FFT / spectral) evaluation ran.
    sound : bool
        True: ``upper`` is a certified (proven) bound.  False: comparison only, never a guarantee.
    kind : {"upper", "estimate"}
        ``"upper"`` or ``"estimate"`` (a heuristic value, in ``estimate``; ``upper`` is None).
    estimate : float or ndarray of float64 or None
        The value of a ``kind="estimate"`` method (μ-GDP), else None.
    """

    quantity: Literal["epsilon", "delta"]
    upper: Values | None
    lower: Values | None
    method: str
    n: Counts
    epsilon: Values | None
    delta: Values | None
    mechanism: dict
    settings: dict = field(default_factory=dict)
    sound: bool = True
    kind: Literal["upper", "estimate"] = "upper"
    estimate: Values | None = None

    @property
    def value(self) -> Values | None:
        """The method's number: ``upper`` for bounds, ``estimate`` for estimates."""
        return self.estimate if self.kind == "estimate" else self.upper

    def _side(self, side: str, key: str):
        """``key`` of the evaluation record of ``side`` ("upper" / "lower") at the answer, per point."""
        if "grid" in self.settings:
            def one(rec):
                info = rec.get(side) if isinstance(rec, Mapping) else None
                if info is None:
                    return None
                if key == "delta_error":
                    return info.get("delta_error", info.get("charged"))
                return info.get(key)
            recs = self.settings["grid"]
        else:
            if side != "upper":
                return None

            def one(rec):
                if key == "evaluator":
                    return self.settings.get("evaluator")
                return rec.get(key) if isinstance(rec, Mapping) else None
            recs = self.settings.get("points")
        if isinstance(recs, list):
            return [one(r) for r in recs]
        return one(recs)

    @property
    def error(self) -> float | list | None:
        """Certified error bound of the upper δ evaluation at the answer (δ units).

        Read from the evaluation record (``settings["grid"]`` for ``"optimal"``, ``settings["points"]``
        for comparison methods): a float, a list for array inputs, or None where the method has no
        error bound (closed forms, estimates).  For ``evaluator="exact"`` it is the whole error of
        the Bromwich / enumeration value; for the FFT engine the tail, aliasing and round-off charge
        (the discretisation's own bias is certified one-sided but not included); for the exact
        binomial sums of ``"clone"`` and ``"variation-ratio"`` the binomial mass outside the window.
        """
        return self._side("upper", "delta_error")

    @property
    def delta_error(self) -> float | list | None:
        """Deprecated alias of :attr:`error`."""
        _deprecated("BoundResult.delta_error", "BoundResult.error")
        return self.error

    def evaluator_of(self, side: str = "upper") -> str | list | None:
        """The evaluator that actually produced the ``side`` number.

        The requested evaluator (``settings["evaluator"]``) may hand a case to another one: a
        Chernoff bound when δ is below the double range (``"chernoff"``), exact enumeration at
        small n (``"enumeration"``), exact nested binomial sums at moderate n (``"binomial-mixture"``),
        the FFT engine as a fallback, or ``"none"`` when δ = 0 exactly.

        Parameters
        ----------
        side : {"upper", "lower"}, default "upper"
            Which bound.

        Returns
        -------
        str or list or None
            The evaluator's name (one per point for array inputs, collapsed to one string when all
            agree); None when there is no such number.
        """
        if side == "lower" and self.lower is None:
            return None
        engine = self.settings.get(f"{side}_engine") if isinstance(self.settings, dict) else None
        if engine == "exact-count":      # binary RR: the exact count law gave this side (min / max of engines)
            return "exact-count"
        ev = self._side(side, "evaluator")
        if isinstance(ev, list):
            distinct = {e for e in ev}
            return ev[0] if len(distinct) == 1 else ev
        return ev

    def bounds(self) -> dict:
        """Each reported number with the guarantee it carries.

        Returns
        -------
        dict
            ``{"upper": ..., "lower": ...}`` (or ``{"estimate": ...}`` for a ``kind="estimate"``
            method); each entry is None or ``{"value", "guarantee", "evaluator", "error", "delta_error"}``:
            the number (ε in nats, or δ), its guarantee in words (:func:`guarantee`), the evaluator
            that produced it and the certified error of its δ evaluation (δ units; None where the
            method has none; ``delta_error`` is its former key, kept for schema version 1).
        """
        if self.kind == "estimate":
            return {"estimate": {"value": to_jsonable(self.estimate), "guarantee": guarantee("estimate", sound=self.sound),
                                 "evaluator": self.settings.get("evaluator"), "error": None, "delta_error": None}}
        out: dict = {}
        for side, value in (("upper", self.upper), ("lower", self.lower)):
            if value is None:
                out[side] = None
                continue
            out[side] = {"value": to_jsonable(value), "guarantee": guarantee(side, sound=self.sound),
                         "evaluator": self.evaluator_of(side),
                         "error": to_jsonable(self._side(side, "delta_error")),
                         "delta_error": to_jsonable(self._side(side, "delta_error"))}
        return out

    def to_dict(self) -> dict:
        """JSON-serialisable dict (arrays become lists): the ``result`` member of the command line's JSON.

        Returns
        -------
        dict
            ``quantity``; ``<quantity>_upper``, ``<quantity>_lower`` (and ``<quantity>_estimate``
            for estimates); the given parameter, ``n``, ``eps0``, ``mechanism``, ``method``,
            ``sound``, ``method_kind`` (``"upper"``: the method gives bounds; ``"estimate"``: a
            heuristic value); ``units`` (ε in nats); ``bounds`` (:meth:`bounds`: each number with its
            guarantee, evaluator and certified error); ``evaluator`` (the evaluator that produced the
            upper number, see :meth:`evaluator_of`), ``error`` (the certified error of the upper number's
            δ evaluation; also under its former key ``delta_error``) and the numerical ``settings``
            (``settings["evaluator"]`` is the evaluator requested).
        """
        q = self.quantity
        other = "delta" if q == "epsilon" else "epsilon"
        out = {
            "quantity": q,
            f"{q}_upper": to_jsonable(self.upper),
            f"{q}_lower": to_jsonable(self.lower),
        }
        if self.kind == "estimate":
            out[f"{q}_estimate"] = to_jsonable(self.estimate)
        out.update({
            other: to_jsonable(getattr(self, other)),
            "n": to_jsonable(self.n),
            "eps0": self.mechanism.get("eps0"),
            "mechanism": self.mechanism,
            "method": self.method,
            "sound": self.sound,
            "method_kind": self.kind,
            "units": {"epsilon": "nats", "eps0": "nats"},
            "bounds": self.bounds(),
            "evaluator": self.evaluator_of("upper") if self.kind != "estimate" else self.settings.get("evaluator"),
            "error": to_jsonable(self.error),
            "delta_error": to_jsonable(self.error),
            "settings": to_jsonable(self.settings),
        })
        return out

    def __repr__(self) -> str:
        q = self.quantity
        other = "delta" if q == "epsilon" else "epsilon"
        if self.kind == "estimate":
            parts = [("estimate", self.estimate)]
        else:
            parts = [("upper", self.upper), ("lower", self.lower)]
        parts += [("method", self.method)]
        if self.method == "optimal":
            parts += [("evaluator", self.evaluator_of("upper")), ("error", self.error)]
        parts += [("n", self.n), (other, getattr(self, other))]
        if not self.sound:
            parts.append(("sound", False))
        return f"BoundResult({q}: " + ", ".join(f"{k}={_short(v)}" for k, v in parts) + ")"


@dataclass(frozen=True)
class PlanningResult:
    """Answer of :func:`shuffleamp.planning.max_eps0` or :func:`shuffleamp.planning.min_n`.

    Attributes
    ----------
    quantity : {"eps0", "n"}
        What ``value`` is.
    value : float or int
        Largest feasible ε0 (nats) or smallest feasible n: certified feasible (evaluated).
    infeasible_bound : float or int or None
        The nearest candidate found infeasible (the other end of the final bracket), or None.
    target_epsilon : float
        Target central ε (nats).
    delta : float
        Target δ.
    n : int or None
        Number of users of the answer (the answer itself for ``min_n``).
    mechanism : dict
        Description of the mechanism (``eps0`` is the answer's for ``max_eps0``).
    delta_at_value : float
        Certified upper δ at the target ε for the returned value.
    evaluations : int
        Number of bound evaluations.
    evaluator : str
        Evaluator of the bound evaluations (see :func:`shuffleamp.delta`).
    """

    quantity: Literal["eps0", "n"]
    value: float | int
    infeasible_bound: float | int | None
    target_epsilon: float
    delta: float
    n: int | None
    mechanism: dict
    delta_at_value: float
    evaluations: int
    evaluator: str = "exact"

    def to_dict(self) -> dict:
        """JSON-serialisable dict: the ``result`` member of the command line's JSON.

        Returns
        -------
        dict
            ``quantity``, ``<quantity>`` (the answer), ``<quantity>_infeasible``, ``target_epsilon``,
            ``delta``, ``n``, ``mechanism``, ``delta_upper_at_answer`` (certified upper δ at the
            target ε for the answer), ``guarantee``, ``evaluations``, ``method``, ``evaluator``,
            ``units``.
        """
        return {"quantity": self.quantity, f"{self.quantity}": self.value,
                f"{self.quantity}_infeasible": self.infeasible_bound,
                "target_epsilon": self.target_epsilon, "delta": self.delta, "n": self.n,
                "mechanism": self.mechanism, "delta_upper_at_answer": self.delta_at_value,
                "guarantee": f"certified: the upper delta at target_epsilon is <= delta for this {self.quantity}",
                "evaluations": self.evaluations, "method": "optimal", "evaluator": self.evaluator,
                "units": {"epsilon": "nats", "eps0": "nats"}}

    def __repr__(self) -> str:
        parts = [("value", self.value), ("infeasible", self.infeasible_bound),
                 ("target_epsilon", self.target_epsilon), ("delta", self.delta),
                 ("delta_at_value", self.delta_at_value), ("evaluations", self.evaluations)]
        return f"PlanningResult({self.quantity}: " + ", ".join(f"{k}={_short(v)}" for k, v in parts) + ")"


@dataclass(frozen=True)
class MethodInfo:
    """Static description of a ``method=`` value.

    Attributes
    ----------
    name : str
        The ``method=`` value.
    sound : bool
        True if the method's value is a proven (certified) upper bound inside its regime.
    kind : {"upper", "estimate"}
        ``"upper"``: a (claimed) upper bound, returned in ``BoundResult.upper``;
        ``"estimate"``: a heuristic, returned in ``BoundResult.estimate``.
    source : str
        Paper and theorem.
    regime : str
        Generic validity regime (see :func:`shuffleamp.baselines.regime` for the mechanism-specific text).
    """

    name: str
    sound: bool
    kind: Literal["upper", "estimate"]
    source: str
    regime: str


# ---------------------------------------------------------------------------- accounting, binary RR, populations
# (defined here, the one home of result types; importable under their former modules too)
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
        ``"concrete-pair (privacy-loss buckets)"`` (the whole Theorem-14 pair, argument G),
        ``"concrete-pair (exact count)"`` (binary randomized response: the exact pair),
        ``"concrete-pair (count statistic)"`` (a post-processing of the Theorem-14 pair, where the
        exact evaluator cannot take it), ``"concrete-pair (population score statistic)"`` or
        ``"single-round"`` (the largest single-round certified lower bound; composition never
        decreases the total).
    value_discretization_interval : float
        The common PLD grid step d (nats).
    error : float
        δ subtracted from the optimistic composition of the lower bound: ``dp_accounting``'s tail
        truncation (2 t per ``self_compose``) and the floating-point round-off of the composition
        (argument H).
    notes : tuple of str
        What is certified and what is an estimate.
    roundoff : float
        δ added to the upper bound for the floating-point round-off of the composition (argument H).
    limited_by : str
        What limits the bracket: the per-round bracket of the widest round type, the
        discretisation of the composition, or the absence of a composed concrete pair.

    Notes
    -----
    ``ratio`` is ``upper / lower`` (``inf`` if ``lower`` is 0).
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
    roundoff: float = 0.0
    limited_by: str = ""

    @property
    def ratio(self) -> float:
        """upper / lower (``inf`` when the lower bound is 0)."""
        return float(self.upper) / float(self.lower) if self.lower > 0 else math.inf

    def to_dict(self) -> dict:
        """JSON-serialisable dict: ``<quantity>_upper`` / ``<quantity>_lower``, the target, the rounds.

        Returns
        -------
        dict
            Keys ``<quantity>_upper``, ``<quantity>_lower``, ``epsilon``/``delta`` (the given one),
            ``rounds`` (list of ``{"mechanism", "n", "rounds"}``), ``method``, ``lower_method``,
            ``value_discretization_interval``, ``error``, ``roundoff``, ``ratio`` (None if
            infinite), ``limited_by``, ``notes``.
        """
        q = self.quantity
        given = "delta" if q == "epsilon" else "epsilon"
        return {f"{q}_upper": float(self.upper), f"{q}_lower": float(self.lower),
                given: getattr(self, given),
                "rounds": [{"mechanism": m, "n": int(n), "rounds": int(R)} for m, n, R in self.rounds],
                "method": self.method, "lower_method": self.lower_method,
                "value_discretization_interval": float(self.value_discretization_interval),
                "error": float(self.error), "roundoff": float(self.roundoff),
                "ratio": (None if not math.isfinite(self.ratio) else float(self.ratio)),
                "limited_by": self.limited_by, "notes": list(self.notes)}

    def __repr__(self):
        given = (f"delta={self.delta:g}" if self.quantity == "epsilon" else f"epsilon={self.epsilon:g}")
        rs = ", ".join(f"{r[0].get('mechanism')}×{r[2]}" for r in self.rounds)
        return (f"AccountingResult({self.quantity}: upper={self.upper:.6g}, lower={self.lower:.6g}, "
                f"ratio={self.ratio:.4g}, {given}, rounds=[{rs}], lower_method={self.lower_method!r}, "
                f"limited_by={self.limited_by!r})")


@dataclass(frozen=True)
class ExactCountResult:
    """Result of :func:`delta_binary_rr` / :func:`epsilon_binary_rr`.

    Attributes
    ----------
    quantity : {"delta", "epsilon"}
        What ``upper`` and ``lower`` are.
    upper, lower : float or ndarray of float64
        Certified bounds on the exact worst-case value over all neighbouring datasets
        (ε in nats or δ).
    error : float or ndarray of float64
        ``upper - lower``: how far the exact value can be from either.
    worst_m : int or ndarray of int64
        The ``m`` (ones among users 2..n, ordering "user 1 holds 0 vs 1") whose exact value gave
        ``lower``; ``m`` in the reverse ordering is the dataset ``n - 1 - m``.
    converged : bool or ndarray of bool
        True when the search over m is complete (tolerance met, or the worst block is a single
        m, so that only the numerical bands of that pair remain); False when it stopped on its
        pair budget, in which case ``error`` is dominated by unresolved blocks of m.
    eps0, n, epsilon, delta
        The inputs (the quantity asked for is None).
    settings : dict
        Tail mass, tolerance, pair budget, pairs evaluated, time (s), and ``worst_pair_upper``: the
        certified upper of the dataset ``worst_m`` alone (``lower`` is its certified lower; the gap is
        that pair's numerical band).
    method : str
        ``"exact-count"``: the count law of every neighbouring dataset pair, worst case by the certified
        search over datasets.
    """

    quantity: str
    upper: Any
    lower: Any
    error: Any
    worst_m: Any
    converged: Any
    eps0: float
    n: Any
    epsilon: Any = None
    delta: Any = None
    settings: dict = field(default_factory=dict)
    method: str = "exact-count"

    def to_dict(self) -> dict:
        """JSON-serialisable dict (arrays become lists).

        Returns
        -------
        dict
            ``quantity``, ``<quantity>_upper``, ``<quantity>_lower``, ``error``, ``worst_m``, ``converged``,
            ``eps0``, ``n``, the given ``epsilon`` or ``delta``, ``method`` (``"exact-count"``),
            ``settings``, ``units``.
        """
        q = self.quantity
        given = "delta" if q == "epsilon" else "epsilon"
        return {"quantity": q, f"{q}_upper": to_jsonable(self.upper), f"{q}_lower": to_jsonable(self.lower),
                "error": to_jsonable(self.error), "worst_m": to_jsonable(self.worst_m),
                "converged": to_jsonable(self.converged), "eps0": self.eps0, "n": to_jsonable(self.n),
                given: to_jsonable(getattr(self, given)), "method": self.method,
                "settings": to_jsonable(self.settings), "units": {"epsilon": "nats", "eps0": "nats"}}

    def __repr__(self) -> str:
        other = "delta" if self.quantity == "epsilon" else "epsilon"
        parts = [("upper", self.upper), ("lower", self.lower), ("error", self.error), ("method", self.method),
                 ("worst_m", self.worst_m),
                 ("converged", self.converged), ("eps0", self.eps0), ("n", self.n), (other, getattr(self, other))]
        return f"ExactCountResult({self.quantity}: " + ", ".join(f"{k}={_short(v)}" for k, v in parts) + ")"


def _fmt(x) -> str:
    return "None" if x is None else format(float(x), ".6g")


@dataclass(frozen=True)
class GroupResult:
    """Bounds for a target user of one group.

    Attributes
    ----------
    index : int
        Group index in the population.
    mechanism : dict
        ``mechanism.describe()`` of the group.
    n : int
        Users in the group.
    gamma : float
        Blanket mass γ_g w.r.t. the common blanket.
    upper : float
        Certified upper bound (ε in nats, or δ).
    lower : float
        Certified lower bound: the exact divergence of a concrete neighbouring dataset (or of a
        post-processing of it), see the module docstring; never above ``upper``.
    settings : dict
        How the values were evaluated (evaluator, representation of the mixture, charges).
    """

    index: int
    mechanism: dict
    n: int
    gamma: float
    upper: float
    lower: float | None
    settings: dict = field(default_factory=dict)

    @property
    def eps0(self) -> float | None:
        """The group's local ε0 (nats)."""
        return self.mechanism.get("eps0")

    @property
    def error(self) -> float | None:
        """Certified error bound (δ units) charged in the upper evaluation at the answer."""
        return self.settings.get("charged")

    def to_dict(self, quantity: str) -> dict:
        """Plain dict with ``<quantity>_upper`` / ``<quantity>_lower``, ``n``, ``eps0``, ``mechanism``, ``error``
        (also under its former key ``delta_error``)."""
        return {"group": self.index, "mechanism": self.mechanism, "n": self.n, "eps0": self.eps0,
                "gamma": self.gamma, f"{quantity}_upper": self.upper, f"{quantity}_lower": self.lower,
                "error": self.error, "delta_error": self.error, "settings": self.settings}

    def __repr__(self) -> str:
        name = self.mechanism.get("mechanism", "?")
        return (f"GroupResult({self.index}: {name} eps0={_fmt(self.eps0)} n={self.n}, upper={_fmt(self.upper)}, "
                f"lower={_fmt(self.lower)})")


@dataclass(frozen=True)
class PopulationResult:
    """Per-group bounds of a population (:func:`delta`, :func:`epsilon`, or ``shuffleamp.epsilon(pop, ...)``).

    Attributes
    ----------
    quantity : {"epsilon", "delta"}
        What the bounds are.
    groups : tuple of GroupResult
        One entry per group.
    worst : int
        Index of the group with the largest upper bound.
    epsilon, delta : float or None
        The given parameter (the other one is the answer, and None here).
    population : dict
        ``Population.describe()``.
    method : str
        ``"optimal"`` (the certified personalized bound of this module).
    """

    quantity: str
    groups: tuple
    worst: int
    epsilon: float | None
    delta: float | None
    population: dict
    method: str = "optimal"
    sound: bool = True
    kind: str = "upper"

    @property
    def upper(self) -> float:
        """Largest per-group upper bound: the population-wide guarantee (worst group)."""
        return self.groups[self.worst].upper

    @property
    def lower(self) -> float | None:
        """Largest per-group lower bound: a certified lower bound on the population-wide value
        (the worst group's true value is at least every group's lower bound)."""
        lows = [gr.lower for gr in self.groups if gr.lower is not None]
        return max(lows) if lows else None

    @property
    def error(self) -> float | None:
        """Certified error bound (δ units) of the worst group's upper evaluation."""
        return self.groups[self.worst].error

    @property
    def n(self) -> int:
        """Total number of users."""
        return int(self.population["n"])

    def to_dict(self) -> dict:
        """JSON-serialisable dict: ``groups`` (one entry each) and the worst group's values at top level.

        Returns
        -------
        dict
            ``<quantity>_upper`` (worst group), ``<quantity>_lower`` (largest group lower bound),
            the given parameter, ``n``, ``eps0`` (largest ε0 present), ``mechanism`` (the population's
            description), ``method``, ``sound``, ``kind``, ``worst_group``, ``error`` (also under its former
            key ``delta_error``), ``groups``.
        """
        from . import __version__
        q = self.quantity
        other = "delta" if q == "epsilon" else "epsilon"
        return {f"{q}_upper": self.upper, f"{q}_lower": self.lower, other: getattr(self, other),
                "n": self.n, "eps0": max((gr.eps0 for gr in self.groups if gr.eps0 is not None), default=None),
                "mechanism": self.population,
                "method": self.method, "sound": self.sound, "kind": self.kind, "worst_group": self.worst,
                "evaluator": "exact", "error": self.error, "delta_error": self.error,
                "groups": [gr.to_dict(q) for gr in self.groups], "version": __version__}

    def __repr__(self) -> str:
        other = "delta" if self.quantity == "epsilon" else "epsilon"
        ups = ", ".join(_fmt(gr.upper) for gr in self.groups[:6]) + (", ..." if len(self.groups) > 6 else "")
        rows = [("upper", f"{_fmt(self.upper)} (group {self.worst})"), ("lower", _fmt(self.lower)),
                ("method", self.method), ("error", _fmt(self.error)), ("n", str(self.n)),
                (other, _fmt(getattr(self, other))), ("groups", f"{len(self.groups)}: upper [{ups}]")]
        return f"PopulationResult({self.quantity}: " + ", ".join(f"{k}={v}" for k, v in rows) + ")"


def decimal_text(x: float, digits: int, rounding: str | None = None) -> str:
    """``x`` with ``digits`` significant digits, rounded up (``"up"``), down (``"down"``) or to nearest.

    Printed bounds are rounded outwards: an upper bound with ``"up"``, a lower bound with ``"down"``,
    so that the printed number is still a valid bound (the command line and the report table share it).

    Parameters
    ----------
    x : float
        The number (non-finite values and 0 are printed as by ``format(x, "g")``).
    digits : int
        Significant digits (>= 1).
    rounding : {"up", "down", None}
        Direction: towards +inf, towards -inf, or to nearest (half even).

    Returns
    -------
    str
    """
    import math
    from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal

    if not math.isfinite(x) or x == 0:
        return format(x, "g")
    d = Decimal(x)
    mode = {"up": ROUND_CEILING, "down": ROUND_FLOOR}.get(rounding or "", ROUND_HALF_EVEN)
    q = d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1), rounding=mode)
    return format(float(q), f".{digits}g")     # the double nearest q prints q's digits
