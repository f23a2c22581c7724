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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Mapping, Union

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    Values = Union[float, "np.ndarray"]
    Counts = Union[int, "np.ndarray"]

__all__ = ["Evaluation", "FftDetail", "ExactDetail", "BoundResult", "PlanningResult", "MethodInfo", "to_jsonable"]


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

    def as_dict(self) -> dict:
        """Plain-dict form (``window`` as a list), keys ``l, N, eta, window, grid_capped``.

        Returns
        -------
        dict
            JSON-serialisable mapping of the fields.
        """
        return {"l": self.l, "N": self.N, "eta": self.eta, "window": list(self.window),
                "grid_capped": self.grid_capped}


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

    def as_dict(self) -> dict:
        """Plain-dict form under the keys of the settings' ``grid`` entries: ``eta`` (the tilt θ)
        and ``N`` (the number of integrand evaluations).

        Returns
        -------
        dict
            ``{"N": nodes, "eta": theta}``.
        """
        return {"N": self.nodes, "eta": self.theta}


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
        ``"fft"``, ``"spectral"``, ``"exact"``, ``"enumeration"``, ``"chernoff"``, ``"trivial"`` or
        ``"none"`` (no positive atom: δ = 0).
    detail : FftDetail or ExactDetail or None
        Evaluator-specific details.
    """

    delta: float
    mode: str
    charged: float
    evaluator: str = "none"
    detail: FftDetail | ExactDetail | None = None

    def as_dict(self) -> dict:
        """Plain dict: ``delta, mode, charged, evaluator`` plus the detail's keys (see the sub-records).

        Returns
        -------
        dict
            JSON-serialisable mapping (``grid_capped`` placed last when present).
        """
        extra = self.detail.as_dict() if self.detail is not None else {}
        d = {"delta": self.delta, "mode": self.mode}
        d.update((k, v) for k, v in extra.items() if k != "grid_capped")
        d["charged"] = self.charged
        if "grid_capped" in extra:
            d["grid_capped"] = extra["grid_capped"]
        d["evaluator"] = self.evaluator
        return d



def to_jsonable(x):
    """``x`` with numpy arrays and scalars converted to lists and Python numbers (other values unchanged).

    Parameters
    ----------
    x : object
        A value of a result field.

    Returns
    -------
    object
        JSON-serialisable when ``x`` is a number, an array or None.
    """
    import numpy as np

    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x


def _short(x) -> str:
    """Compact text of a float, an array or None (for reprs)."""
    import numpy as np

    if x is None:
        return "None"
    if isinstance(x, np.ndarray):
        return np.array2string(x, precision=6, threshold=6, separator=", ")
    if isinstance(x, list):
        return "[" + ", ".join(_short(v) for v in x[:6]) + (", ..." if len(x) > 6 else "") + "]"
    if isinstance(x, float):
        return format(x, ".10g")
    return repr(x)


def _repr_lines(title: str, rows: list[tuple[str, object]]) -> str:
    width = max(len(k) for k, _ in rows)
    return "\n".join([title] + [f"  {k.rjust(width)}: {_short(v)}" for k, v in rows])


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
        Certified lower bound (exact divergence of a concrete neighbouring dataset, [SCW]_
        Theorem 14), or None if the method has none (every method except ``"optimal"``).
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

    @property
    def delta_error(self) -> float | list | None:
        """Certified error bound of the upper δ evaluation at the answer (δ units).

        Read from the evaluation record (``settings["grid"]`` for ``"optimal"``, ``settings["points"]``
        for comparison methods): a float, a list for array inputs, or None where the method has no
        error bound (closed forms, estimates).  For ``evaluator="exact"`` it is the whole error of
        the Bromwich / enumeration value; for the FFT engine the tail, aliasing and round-off charge
        (the discretisation's own bias is certified one-sided but not included); for the exact
        binomial sums of ``"clone"`` and ``"variation-ratio"`` the binomial mass outside the window.
        """
        if "grid" in self.settings:
            def one(rec):
                info = rec.get("upper") if isinstance(rec, Mapping) else None
                return None if info is None else info.get("delta_error", info.get("charged"))
            recs = self.settings["grid"]
        else:
            def one(rec):
                return rec.get("delta_error") if isinstance(rec, Mapping) else None
            recs = self.settings.get("points")
        if isinstance(recs, list):
            return [one(r) for r in recs]
        return one(recs)

    def to_dict(self) -> dict:
        """JSON-serialisable dict (arrays become lists) with the command line's key names.

        Returns
        -------
        dict
            ``<quantity>_upper``, ``<quantity>_lower``, the given parameter, ``n``, ``eps0``,
            ``mechanism``, ``method``, ``sound``, ``kind``, ``settings``, ``version``; estimates add
            ``<quantity>_estimate``; ``"optimal"`` adds ``evaluator`` and ``delta_error``.
        """
        from . import __version__

        q = self.quantity
        other = "delta" if q == "epsilon" else "epsilon"
        out = {
            f"{q}_upper": to_jsonable(self.upper),
            f"{q}_lower": to_jsonable(self.lower),
            other: to_jsonable(getattr(self, other)),
            "n": to_jsonable(self.n),
            "eps0": self.mechanism.get("eps0"),
            "mechanism": self.mechanism,
            "method": self.method,
            "sound": self.sound,
            "kind": self.kind,
            "settings": self.settings,
            "version": __version__,
        }
        if self.kind == "estimate":
            out[f"{q}_estimate"] = to_jsonable(self.estimate)
        if self.method == "optimal":
            out["evaluator"] = self.settings.get("evaluator")
            out["delta_error"] = self.delta_error
        return out

    def __repr__(self) -> str:
        q = self.quantity
        other = "delta" if q == "epsilon" else "epsilon"
        rows: list[tuple[str, object]] = [("quantity", q)]
        if self.kind == "estimate":
            rows.append(("estimate", self.estimate))
        else:
            rows += [("upper", self.upper), ("lower", self.lower)]
        rows += [("method", self.method), ("evaluator", self.settings.get("evaluator")),
                 ("delta_error", self.delta_error), ("n", self.n), (other, getattr(self, other))]
        if not self.sound:
            rows.append(("sound", False))
        return _repr_lines("BoundResult", rows)


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
        """JSON-serialisable dict (the command line's ``--json`` output).

        Returns
        -------
        dict
            ``<quantity>``, ``<quantity>_infeasible``, ``target_epsilon``, ``delta``, ``n``,
            ``mechanism``, ``delta_upper_at_answer``, ``evaluations``, ``method``, ``evaluator``,
            ``version``.
        """
        from . import __version__

        return {f"{self.quantity}": self.value, f"{self.quantity}_infeasible": self.infeasible_bound,
                "target_epsilon": self.target_epsilon, "delta": self.delta, "n": self.n,
                "mechanism": self.mechanism, "delta_upper_at_answer": self.delta_at_value,
                "evaluations": self.evaluations, "method": "optimal", "evaluator": self.evaluator,
                "version": __version__}

    def __repr__(self) -> str:
        return _repr_lines("PlanningResult", [
            (self.quantity, self.value), ("infeasible", self.infeasible_bound),
            ("target_epsilon", self.target_epsilon), ("delta", self.delta),
            ("delta_at_value", self.delta_at_value), ("evaluations", self.evaluations)])


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
