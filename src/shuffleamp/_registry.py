"""Names of the ``method=`` and ``evaluator=`` choices, and the :class:`Method` registry entry type.

Light on purpose (no numpy, no kernels): the command line builds its parser from these names
without loading the numerical modules.  The entries themselves are registered by
:mod:`shuffleamp.bounds` (``"optimal"``) and :mod:`shuffleamp.baselines` (every comparison method).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .results import MethodInfo

__all__ = ["COMPOSED", "METHODS", "EVALUATORS", "DEFAULT_EVALUATOR", "OPTIMAL_INFO", "OPTIMAL_REGIME", "OPTIMAL_SOURCE",
           "EXACT_COUNT_INFO", "Method"]

#: Names of the composed mechanisms (``mechanism=`` in plans and on the command line).
COMPOSED: tuple[str, ...] = ("joint", "parallel", "subsample")
#: Every ``method=`` value, in display order; ``"optimal"`` is the default (for binary randomized response
#: it already includes ``"exact-count"``, the exact count law, registered by :mod:`shuffleamp.bounds`).
METHODS: tuple[str, ...] = ("optimal", "exact-count", "clone", "clone-closed-form", "stronger-clone", "blanket-hoeffding",
                            "blanket-bennett", "erlingsson", "variation-ratio", "gdp")
#: ``"exact"`` (default): Bromwich integral / enumeration (:mod:`shuffleamp.exact`); ``"fft"``,
#: ``"spectral"``, ``"auto"``: the certified discretised engine.
EVALUATORS: tuple[str, ...] = ("exact", "fft", "spectral", "auto")
DEFAULT_EVALUATOR = "exact"

#: Validity regime of the default method (``settings["regime"]``).
OPTIMAL_REGIME = ("any pure ε0-LDP randomizer of the catalogue (all ordered input pairs for matrices); "
                  "certified upper and lower bounds")
#: Source of the default method (``settings["source"]``).
OPTIMAL_SOURCE = ("Su, Cheng, Wang, Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling, "
                  "IEEE S&P 2026 (arXiv:2504.07414): optimal blanket / general-clone decomposition, "
                  "Theorem 13 (upper) and Theorem 14 (lower)")
#: Description of the default method.
OPTIMAL_INFO = MethodInfo("optimal", True, "upper", OPTIMAL_SOURCE,
                          "any pure ε0-LDP randomizer of the catalogue; certified upper and lower bounds")

#: Description of the exact count-law method for binary randomized response.
EXACT_COUNT_INFO = MethodInfo(
    "exact-count", True, "upper",
    "exact law of the count of ones (Cheu, Smith, Ullman, Zeber, Zhilyaev, Distributed Differential Privacy via "
    "Shuffling, EUROCRYPT 2019) with a certified search over every neighbouring dataset",
    "binary randomized response only (k-RR with k = 2, or a symmetric 2 x 2 matrix); certified upper and lower "
    "bounds on the exact worst case over all datasets")


@dataclass(frozen=True)
class Method:
    """One ``method=`` value: its description and its implementations.

    Attributes
    ----------
    info : MethodInfo
        Name, soundness, kind, source and generic regime.
    delta : callable
        ``delta(mechanism, n, epsilon, ctx) -> (value, info dict)`` at one point.
    epsilon : callable
        ``epsilon(mechanism, n, delta, ctx) -> (value, info dict)`` at one point.
    prepare : callable, optional
        ``prepare(mechanism, ctx) -> None``: adds mechanism-specific data to ``ctx`` once per call
        (raises :class:`~shuffleamp.errors.OutOfRegimeError` if the method is undefined for it).
    settings : callable, optional
        ``settings(mechanism, ctx) -> dict``: method-specific entries of ``BoundResult.settings``.
    regime : callable, optional
        ``regime(mechanism) -> str``: the mechanism-specific validity regime (default: ``info.regime``).
    """

    info: MethodInfo
    delta: Callable[..., tuple[float, dict]]
    epsilon: Callable[..., tuple[float, dict]]
    prepare: Callable[..., None] | None = None
    settings: Callable[..., dict] | None = None
    regime_of: Callable[[Any], str] | None = None

    @property
    def name(self) -> str:
        """The ``method=`` value."""
        return self.info.name

    @property
    def sound(self) -> bool:
        """True if the value is a proven upper bound inside the regime."""
        return self.info.sound

    @property
    def kind(self) -> str:
        """``"upper"`` or ``"estimate"``."""
        return self.info.kind

    @property
    def source(self) -> str:
        """Paper and theorem."""
        return self.info.source

    def regime(self, mechanism=None) -> str:
        """Validity regime, specific to ``mechanism`` where it matters.

        Parameters
        ----------
        mechanism : Mechanism, optional
            The mechanism the bound is applied to; None for the generic regime.

        Returns
        -------
        str
            Human-readable statement of where the method's number is valid.
        """
        if mechanism is None or self.regime_of is None:
            return self.info.regime
        return self.regime_of(mechanism)
