"""Typed results of shuffleamp's evaluators.

:class:`Evaluation` is what both δ evaluators return for one GPARV: the discretised engine of
:mod:`shuffleamp.fft_engine` and the exact (Bromwich / enumeration) evaluator of
:mod:`shuffleamp.exact`.  Evaluator-specific details sit in a typed sub-record
(:class:`FftDetail` or :class:`ExactDetail`), so no FFT field appears when no FFT ran.

References
----------
Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling",
IEEE S&P 2026 (arXiv:2504.07414): δ = (1/n) E[(G_1+...+G_n)_+] of a GPARV G (Theorems 12-13).
"""

from __future__ import annotations

from dataclasses import dataclass


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
        """Plain-dict form (``window`` as a list), keys ``l, N, eta, window, grid_capped``."""
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
        and ``N`` (the number of integrand evaluations)."""
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
        """Plain dict: ``delta, mode, charged, evaluator`` plus the detail's keys (see the sub-records)."""
        extra = self.detail.as_dict() if self.detail is not None else {}
        d = {"delta": self.delta, "mode": self.mode}
        d.update((k, v) for k, v in extra.items() if k != "grid_capped")
        d["charged"] = self.charged
        if "grid_capped" in extra:
            d["grid_capped"] = extra["grid_capped"]
        d["evaluator"] = self.evaluator
        return d
