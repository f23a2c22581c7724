"""Names of the ``method=`` and ``evaluator=`` choices, and the :class:`Method` registry entry type.

Light on purpose (no numpy, no kernels): the command line builds its parser from these names
without loading the numerical modules.  The entries themselves are registered by
:mod:`shuffleamp.bounds` (``"optimal"``) and :mod:`shuffleamp.baselines` (every comparison method).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable, Sequence

from .results import MethodInfo

__all__ = ["COMPOSED", "METHODS", "EVALUATORS", "DEFAULT_EVALUATOR", "OPTIMAL_INFO", "OPTIMAL_REGIME", "OPTIMAL_SOURCE",
           "EXACT_COUNT_INFO", "Method", "Settings"]

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
class Settings:
    """The settings of one ``delta`` / ``epsilon`` call, as every method and evaluator reads them.

    Built once per call by :mod:`shuffleamp.bounds` from the validated keyword arguments; a method's
    ``prepare`` returns a copy with its mechanism-specific data filled in (:meth:`with_`).  Frozen: a
    helper that needs other settings (another evaluator, other families) makes a copy, so a call never
    changes the settings another part of it reads.

    Attributes
    ----------
    rtol, rtol_lower : float
        Requested relative accuracy of the upper / lower δ of the discretised engine (grid choice).
    max_grid : int
        Largest FFT length of the discretised engine.
    evaluator : str
        A value of :data:`EVALUATORS`.
    max_seconds, max_memory_gb : float
        The call's time and memory budget (see :func:`shuffleamp._numerics.budget`).
    eps_rtol : float
        Relative width of the final bracket of an ε search (ε(δ) queries).
    upper_families, lower_families : sequence
        The optimal method's GPARV families (upper bound: Theorem 13 pairs; lower bound: Theorem 14
        datasets), set by its ``prepare``; empty for the other methods.
    binary_rr_eps0 : float or None
        ε0 of a binary randomized response whose exact count law the optimal method runs beside the
        decomposition (None otherwise).
    method : str
        The ``method=`` value (set by the comparison methods' ``prepare``).
    stronger : tuple
        The stronger-clone decompositions (both orientations) of ``method="stronger-clone"``.
    vr : object
        The (p, β, q) parameters of ``method="variation-ratio"``.
    memo : dict
        Values computed once per call and read again within it (the count projections of the lower-bound
        datasets, binary RR's count law at a point); not part of the settings' identity.
    """

    rtol: float
    rtol_lower: float
    max_grid: int
    evaluator: str
    max_seconds: float
    max_memory_gb: float
    eps_rtol: float = 1e-7
    upper_families: Sequence = ()
    lower_families: Sequence = ()
    binary_rr_eps0: float | None = None
    method: str = "optimal"
    stronger: tuple = ()
    vr: Any = None
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    def with_(self, **changes) -> "Settings":
        """A copy with ``changes`` applied and a fresh ``memo`` (its entries belong to the old families).

        The fields are copied as they are (no ``__init__`` call: every value was set by a constructor call or an
        earlier copy), which keeps this off the latency of a call; an unknown name raises TypeError."""
        unknown = changes.keys() - _SETTINGS_FIELDS
        if unknown:
            raise TypeError(f"Settings has no field {sorted(unknown)[0]!r}")
        new = object.__new__(Settings)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        new.__dict__["memo"] = {}
        return new


_SETTINGS_FIELDS = frozenset(f.name for f in fields(Settings))


@dataclass(frozen=True)
class Method:
    """One ``method=`` value: its description and its implementations.

    Attributes
    ----------
    info : MethodInfo
        Name, soundness, kind, source and generic regime.
    delta : callable
        ``delta(mechanism, n, epsilon, settings) -> (upper, lower or None, record)`` at one point
        (``settings`` a :class:`Settings`).
    epsilon : callable
        ``epsilon(mechanism, n, delta, settings) -> (upper, lower or None, record)`` at one point.
    prepare : callable, optional
        ``prepare(mechanism, settings) -> Settings``: the settings with the method's mechanism-specific data,
        once per call (raises :class:`~shuffleamp.errors.OutOfRegimeError` if the method is undefined for it).
    settings : callable, optional
        ``settings(mechanism, settings, records) -> dict``: method-specific entries of ``BoundResult.settings``.
    regime : callable, optional
        ``regime(mechanism) -> str``: the mechanism-specific validity regime (default: ``info.regime``).
    """

    info: MethodInfo
    delta: Callable[..., tuple[float, dict]]
    epsilon: Callable[..., tuple[float, dict]]
    prepare: Callable[..., Settings] | None = None
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
