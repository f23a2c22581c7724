r"""Local randomizers, each owning its decompositions, lower-bound datasets and domain.

Every mechanism knows

* its row-stochastic matrix form ``P[x, y] = Pr[R(x) = y]`` (finite mechanisms of
  moderate size only),
* its blanket mass :math:`\gamma = \sum_y \min_x P[x, y]` in closed form,
* its optimal general-clone decomposition for the worst-case (equivalently, by input
  symmetry, any) neighbouring pair, with **exact finite-domain** coefficients
  ([SCW] Theorems 5 and 7, Table 2),
* the decompositions whose GPARVs give the **upper** bound ([SCW] Theorem 13; the bound is the
  maximum over the list and the swapped versions of its entries),
* the Theorem-14 decompositions (dataset :math:`x_2 = \dots = x_n`) whose GPARVs give
  **lower** bounds ([SCW] Theorem 14; the bound is the maximum over the list), tagged with the
  dataset's shape (:meth:`Mechanism.lower_cases`) so that parallel composition can mix them,
* its input-domain size (:attr:`Mechanism.domain`), how to change ε0 (:meth:`Mechanism.with_eps0`),
  its variation-ratio parameter ([WPL24] Table 2, :meth:`Mechanism.variation_ratio_beta`) and, when
  known, its stronger-clone decomposition ([FMT23], :meth:`Mechanism.stronger_clone_decomposition`).

Concrete classes register themselves in :data:`MECHANISMS` by their ``name`` and declare their
constructor parameters once (``param_specs``: :class:`~shuffleamp._validate.Parameter` records with
kind, range, unit, default or required, doc), which :func:`make`, the command line, plan files and
sweeps read.  A new finite mechanism needs one class, here or in a package of its own registered
through the entry-point group ``shuffleamp.mechanisms`` (:func:`registry`; see ``CONTRIBUTING.md``).

Notation: :math:`E = e^{\varepsilon_0}` with :math:`\varepsilon_0` in nats,
:math:`t = e^{\varepsilon_0/2}`, :math:`e = e^{\varepsilon}`.

The five-component form used by every extreme-property mechanism is
:meth:`shuffleamp.decomposition.Decomposition.from_pqr`: components with ratio
:math:`(E,1), (1,E), (E,E), (1,1)` and blanket masses :math:`p, p, q, r`.

References
----------
.. [SCW] J. Su, Y. Cheng, T. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification
   via Shuffling", IEEE S&P 2026; short version "A Unified Framework and Efficient Computation for
   Privacy Amplification via Shuffling", arXiv:2504.07414.
.. [FMT23] V. Feldman, A. McMillan, K. Talwar, "Stronger Privacy Amplification by Shuffling for
   Rényi and Approximate Differential Privacy", SODA 2023.
.. [WPL24] S. Wang et al., "Privacy Amplification via Shuffling: Unified, Simplified, and
   Tightened", PVLDB 17(8), 2024.
.. [BBGN19] B. Balle, J. Bell, A. Gascón, K. Nissim, "The Privacy Blanket of the Shuffle Model",
   CRYPTO 2019.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import hashlib
import itertools
import math
import os
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar, Hashable, Mapping

import numpy as np

from . import _validate
from ._numerics import check_time, check_work
from ._validate import REQUIRED, Parameter
from .decomposition import (RATIO_RTOL, Decomposition, PackedFamilies, dedupe, law_keys, merge_rows,
                            primary_decomposition, ratio_keys, small_decomposition)
from .errors import ParameterError, ResourceLimitError
from .gparv import ContinuousPart, Gparv

__all__ = [
    "Mechanism", "KRR", "BLH", "RAPPOR", "OUE", "HadamardResponse", "Laplace",
    "MatrixMechanism", "MECHANISMS", "make", "registry", "Parameter", "REQUIRED", "EPS0", "ENTRY_POINT_GROUP",
    "LaplaceFamily", "laplace_upper_gparv",
    "laplace_lower_gparv", "inv_sqrt_mgf", "inv_sqrt_mgf_scaled", "laplace_spread_decomposition",
    "laplace_cells_lower", "laplace_cells", "ratio_spread_components",
    "MAX_MATRIX_ENTRIES", "MAX_BIT_DOMAIN", "EPS0_MAX",
]

#: Largest matrix (inputs x outputs entries) :meth:`Mechanism.matrix` will build.
MAX_MATRIX_ENTRIES = 2 ** 22
#: Largest domain size for which the BLH / RAPPOR / OUE matrix (2^d or 2^(d+1) outputs) is built.
MAX_BIT_DOMAIN = 12
#: Largest ε0 (nats) of any mechanism (parametric, matrix or composed); see
#: :func:`shuffleamp._validate.mechanism_eps0` for why it is not the float64 limit 709.
EPS0_MAX = _validate.EPS0_MAX
#: HR lower decompositions are computed from matrix rows up to this Hadamard order, closed form above.
HR_LOWER_FROM_MATRIX_MAX_D = 1024
#: MatrixMechanism: all triples (x0, x1, x2) are used as lower-bound datasets up to this many inputs.
MATRIX_ALL_TRIPLES_MAX_D = 6
#: MatrixMechanism: cap on the number of heuristic lower-bound datasets for larger domains.
MATRIX_MAX_LOWER = 64
#: MatrixMechanism: budget (pairs x outputs) for the all-pairs de-duplication of upper decompositions
#: and for the pairwise total variation of :meth:`MatrixMechanism.variation_ratio_beta`.
MATRIX_PAIR_BUDGET = 2 ** 28
#: Seconds per ordered input pair, and per ordered pair and output, assumed by the up-front cost
#: estimate of a matrix's decompositions and their screening (the call's ``max_seconds`` refuses
#: larger matrices before building anything).
MATRIX_PAIR_SECONDS = 2e-6
MATRIX_ENTRY_SECONDS = 4e-6
#: Entries (ordered pairs x outputs) per batch of the vectorised pair construction (bounds its memory).
MATRIX_BATCH_ENTRIES = 2 ** 18

_FORMS = ("simplified", "primary", "asymptotic")

#: Registry: name -> mechanism class (filled by :meth:`Mechanism.__init_subclass__`; mechanisms of
#: installed plugins are added by :func:`registry`).
MECHANISMS: dict[str, type] = {}
#: Entry-point group through which installed packages register mechanism classes (see :func:`registry`).
ENTRY_POINT_GROUP = "shuffleamp.mechanisms"

#: The local privacy level ε0 every mechanism takes (declared once here; prepended to each class's
#: ``param_specs`` unless the class declares its own ``eps0`` entry, as the matrix mechanism does).
EPS0 = Parameter("eps0", "real", minimum=0.0, maximum=_validate.EPS0_MAX, open_minimum=True, unit="nats",
                 doc="local privacy level of the randomizer", check_value=_validate.mechanism_eps0)


# ---------------------------------------------------------------------------- helpers
def _eps0(value) -> float:
    return _validate.mechanism_eps0(value)


def _form(form) -> str:
    return _validate.choice(form, "form", set(_FORMS))


def _popcount(x: np.ndarray) -> np.ndarray:
    """Bit count of non-negative int64 entries (works on numpy < 2 as well)."""
    x = np.asarray(x, dtype=np.int64)
    if hasattr(np, "bitwise_count"):            # numpy >= 2.0: one ufunc
        return np.bitwise_count(x).astype(np.int64)
    out = np.zeros_like(x)
    while True:
        nz = x != 0
        if not nz.any():
            return out
        out += x & 1
        x = x >> 1


def _hadamard_sign(rows, cols) -> np.ndarray:
    """``H[x, y] = (-1)^{popcount(x & y)}`` for the given row and column indices (Sylvester order)."""
    rows = np.asarray(rows, dtype=np.int64).reshape(-1, 1)
    cols = np.asarray(cols, dtype=np.int64).reshape(1, -1)
    return 1 - 2 * (_popcount(rows & cols) & 1)


def _check_entries(n_entries: int, param: str, what: str):
    if n_entries > MAX_MATRIX_ENTRIES:
        raise ParameterError(param, f"the matrix form of {what} would have {n_entries} entries "
                                    f"(> {MAX_MATRIX_ENTRIES}); use the closed-form decompositions")


def _bit_lower(E: float, pi0, pi1, pi2, same: bool, label: str) -> Decomposition:
    r"""Theorem-14 decomposition of a 'bit-indicator' mechanism ([SCW] Theorem 14; form derived here).

    ``R(x)(y) ∝ E^{u_x(y)}`` with one bit :math:`u_x(y)` per input; under
    :math:`y \sim R(x_2)` the bits :math:`u_0, u_1, u_2` (at :math:`x_1^0, x_1^1, x_2`) are independent
    Bernoulli(``pi0``, ``pi1``, ``pi2``), and :math:`R(x_j)(y)/R(x_2)(y) = E^{u_j - u_2}`.
    With ``same=True`` the dataset is :math:`x_2 = x_1^1` (so :math:`u_1 \equiv u_2`; ``pi1`` unused).

    Each ``pi`` is a pair ``(Pr[u = 1], Pr[u = 0])`` computed separately in closed form, so that a
    probability close to 1 keeps its complement's relative accuracy at large ε0 (``1 - E/(1+E)``
    cancels to 0 from ε0 ≈ 37 on).
    """
    a, b, c = [], [], []
    for u0 in (0, 1):
        for u2 in (0, 1):
            for u1 in ((u2,) if same else (0, 1)):
                pr = pi0[1 - u0] * pi2[1 - u2] * (1.0 if same else pi1[1 - u1])
                c.append(pr)
                a.append(pr * E ** (u0 - u2))
                b.append(pr * E ** (u1 - u2))
    return small_decomposition(a, b, c, 0.0, label=label, simplify=True)


def _unchecked(value, name):
    return value


def _with_default(p: Parameter, default) -> Parameter:
    return Parameter(p.name, p.kind, minimum=p.minimum, maximum=p.maximum, open_minimum=p.open_minimum,
                     open_maximum=p.open_maximum, unit=p.unit, default=default, doc=p.doc, check_value=p.check_value)


# ---------------------------------------------------------------------------- base class
class Mechanism(abc.ABC):
    r"""Abstract local randomizer :math:`R: \mathbb X \to \mathbb Y` satisfying pure :math:`\varepsilon_0`-LDP.

    Concrete mechanisms are frozen dataclasses that validate their parameters on
    construction (through :mod:`shuffleamp._validate`) and raise
    :class:`~shuffleamp.errors.ParameterError` naming the offending field.

    A subclass declares its constructor parameters once, as :class:`~shuffleamp._validate.Parameter`
    records in ``param_specs`` (name, kind, range, unit, default or required, doc); :func:`make`, the
    command line (``--param NAME=VALUE``), plan files and sweeps read that declaration. A subclass that
    defines ``name`` and ``param_specs`` (or the names-only ``parameters``) in its class body registers
    itself in :data:`MECHANISMS`.

    Attributes
    ----------
    name : str
        Registry name (class variable): ``"krr"``, ``"blh"``, ``"rappor"``, ``"oue"``,
        ``"hr"``, ``"laplace"`` or ``"matrix"`` (composed: ``"joint"``, ``"parallel"``,
        ``"subsample"``, ``"silent"``).
    param_specs : tuple of Parameter
        Declaration of every constructor parameter, ``eps0`` included (class variable; a class lists
        its own parameters and :data:`EPS0` is prepended).
    parameters : tuple of str
        Constructor parameters other than ``eps0`` (class variable, derived from ``param_specs``),
        e.g. ``("k",)``.
    defaults : mapping
        Optional constructor parameters and their defaults (class variable, derived from
        ``param_specs``), e.g. ``{"d": None}``; may contain ``"eps0"`` (matrix mechanisms).
    eps0_is_parameter : bool
        Whether ε0 is a free parameter that :meth:`with_eps0` may change (class variable).
    eps0 : float
        The local privacy level ε0 > 0 (nats) the randomizer satisfies.
    """

    name: ClassVar[str] = ""
    param_specs: ClassVar[tuple[Parameter, ...]] = (EPS0,)
    parameters: ClassVar[tuple[str, ...]] = ()
    defaults: ClassVar[Mapping[str, Any]] = {}
    eps0_is_parameter: ClassVar[bool] = True
    #: Whether instances are immutable after construction although not frozen dataclasses (the composed
    #: mechanisms), so the bounds code may cache their GPARV families on the instance.
    _families_cacheable: ClassVar[bool] = False
    #: Composed mechanisms (:mod:`shuffleamp.compose`): their ``param_specs`` declare the data-level fields
    #: (components, weights, q, ...) without ``eps0`` (derived from the components), and they are built
    #: by :func:`shuffleamp.config.from_config`, not registered in :data:`MECHANISMS`.
    _composed: ClassVar[bool] = False
    eps0: float

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own = cls.__dict__
        if cls._composed:
            if "param_specs" in own:
                cls.param_specs = tuple(own["param_specs"])
            return
        if "param_specs" in own:
            specs = tuple(own["param_specs"])
            bad = [p for p in specs if not isinstance(p, Parameter)]
            if bad:
                raise TypeError(f"{cls.__name__}.param_specs must hold Parameter records, got {bad[0]!r}")
            if not any(p.name == "eps0" for p in specs) and own.get("eps0_is_parameter", True):
                specs = (EPS0,) + specs     # eps0 declared once by the base (unless the class derives it)
            names = [p.name for p in specs]
            if len(set(names)) != len(names):
                raise TypeError(f"{cls.__name__}.param_specs declares a parameter twice: {names}")
            cls.param_specs = specs
            if "parameters" not in own:
                cls.parameters = tuple(p.name for p in specs if p.name != "eps0")
            if "defaults" not in own:
                cls.defaults = {p.name: p.default for p in specs if not p.required}
        elif "parameters" in own:
            # the names-only form: each parameter is checked by the class itself
            defaults = dict(cls.defaults)
            eps0 = EPS0 if "eps0" not in defaults else _with_default(EPS0, defaults["eps0"])
            cls.param_specs = (eps0,) + tuple(
                Parameter(p, "real", default=defaults.get(p, REQUIRED), check_value=_unchecked)
                for p in cls.parameters)
        if "name" in own and ("parameters" in own or "param_specs" in own) and cls.name:
            known = MECHANISMS.get(cls.name)
            if (known is not None and known.__module__.startswith("shuffleamp.")
                    and not cls.__module__.startswith("shuffleamp.")):
                raise TypeError(f"mechanism name {cls.name!r} is taken by the built-in {known.__qualname__}")
            MECHANISMS[cls.name] = cls

    @classmethod
    def from_params(cls, **params) -> "Mechanism":
        """Build from keyword parameters (already checked against ``parameters`` by :func:`make`).

        Subclasses whose constructor needs conversion (e.g. a matrix file path) override this.

        Parameters
        ----------
        **params
            The mechanism's ``parameters`` (already checked by :func:`make`).

        Returns
        -------
        Mechanism
        """
        return cls(**params)

    @abc.abstractmethod
    def matrix(self) -> np.ndarray:
        """Row-stochastic matrix ``P[x, y] = Pr[R(x) = y]`` (rows are inputs), float64, read-only.

        Raises
        ------
        ParameterError
            If the matrix would exceed :data:`MAX_MATRIX_ENTRIES` entries (parameter ``'d'``,
            or ``'k'`` for k-RR), the domain is infinite (``d=None``), or the mechanism has
            continuous outputs (Laplace; parameter ``'mechanism'``).

        Returns
        -------
        numpy.ndarray of float64, shape (inputs, outputs)
            Read-only, rows sum to 1.
        """

    @property
    @abc.abstractmethod
    def gamma(self) -> float:
        r"""Blanket mass :math:`\gamma = \sum_y \inf_x R(x)(y)` (exact closed form)."""

    @abc.abstractmethod
    def decomposition(self, form: str = "simplified"):
        """Optimal (blanket) decomposition for the worst-case neighbouring pair.

        Parameters
        ----------
        form : {"simplified", "primary", "asymptotic"}
            ``"simplified"``: merged by likelihood ratio (Theorem 7; exact finite-domain
            coefficients, [SCW] Table 2). ``"primary"``: one component per output, built
            from :meth:`matrix` (Theorem 5). ``"asymptotic"``: the large-domain limit
            ([SCW] Table 3); a limit only, **not** a bound for finite domains.

        Returns
        -------
        Decomposition or LaplaceFamily

        Raises
        ------
        ParameterError
            ``'form'`` for an unknown form; ``'d'`` if the primary form needs a matrix that
            is too large or the domain is infinite.
        """

    @abc.abstractmethod
    def upper_decompositions(self) -> list:
        """Decompositions whose GPARVs bound every neighbouring pair (Theorem 13).

        The upper bound is the maximum over this list **and** the swapped versions of its
        entries (the bounds code does the swapping). Input-symmetric mechanisms return one entry.

        Returns
        -------
        list of GparvFamily
            The upper bound is the maximum over these and their swapped versions.
        """

    @abc.abstractmethod
    def lower_decompositions(self) -> list:
        """Theorem-14 decompositions ``Decomposition(a=R(x0), b=R(x1), c=R(x2), beta=0)``.

        Merged by ratio, one per documented dataset :math:`x_2 = \\dots = x_n` (see the class
        docstring); the lower bound is the maximum over the list.

        Returns
        -------
        list of GparvFamily
            The lower bound is the maximum over the list.
        """

    @abc.abstractmethod
    def describe(self) -> dict:
        """JSON-serialisable description: ``{"mechanism": name, "eps0": ..., <parameters>}``.

        Returns
        -------
        dict
            Plain JSON-serialisable mapping (ε0 in nats).
        """

    # -- owned knowledge with defaults
    def with_eps0(self, eps0: float) -> "Mechanism":
        """The same mechanism (same parameters) at another ε0.

        Parameters
        ----------
        eps0 : float
            New local ε0 in nats.

        Returns
        -------
        Mechanism

        Raises
        ------
        ParameterError
            ``'mechanism'`` for matrix or composed mechanisms, whose ε0 is not a free parameter;
            ``'eps0'`` for an invalid value.
        """
        if not self.eps0_is_parameter:
            raise ParameterError("mechanism", f"{self.name!r}: its eps0 is not a free parameter, so max_eps0 "
                                 "cannot vary it (pass a factory eps0 -> mechanism instead)")
        return dataclasses.replace(self, eps0=eps0)

    @property
    def domain(self) -> int | None:
        """Input-domain size where known (``None`` = unknown / any, e.g. the d→∞ limits)."""
        return None

    def variation_ratio_beta(self) -> tuple[float, str]:
        r"""β of the variation-ratio reduction and its source ([WPL24] Table 2, with :math:`p = e^{\varepsilon_0}`).

        The default is the general-mechanism value :math:`\beta = \tanh(\varepsilon_0/2) = (E-1)/(E+1)`,
        valid for every ε0-LDP randomizer; mechanisms override it with their Table 2 row.

        Returns
        -------
        beta : float
            Total-variation parameter in [0, 1).
        source : str
            Where the value comes from.
        """
        return math.tanh(self.eps0 / 2), "Table 2 general mechanisms"

    def stronger_clone_decomposition(self) -> Decomposition | None:
        """The corrected four-point stronger-clone decomposition of [FMT23], where known (else None).

        Returns
        -------
        Decomposition or None
        """
        return None

    def lower_cases(self) -> list:
        """Theorem-14 decompositions tagged with the dataset's shape (for mixing in parallel composition).

        Returns
        -------
        list of (tuple, GparvFamily)
            ``(pattern, family)`` pairs; patterns are ``("any",)`` (a component that is the same for every
            input), ``("type", "distinct")`` (mutually distinct :math:`x_1^0, x_1^1, x_2`) or
            ``("type", "x2=x1")`` for permutation-symmetric mechanisms, ``("triple", (x0, x1, x2))``
            for explicit matrix rows, and ``("opaque", id)`` (the default) when the dataset cannot be
            matched with another mechanism's.
        """
        return [(("opaque", id(self)), f) for f in self.lower_decompositions()]

    # convenience shared by finite mechanisms
    def _primary(self, x0: int, x1: int) -> Decomposition:
        return primary_decomposition(self.matrix(), x0, x1)


# ---------------------------------------------------------------------------- extreme-property base
class _NoMatrix:
    """Base of the mechanisms without a finite matrix form (continuous outputs, or a class of randomizers):
    :meth:`matrix` refuses with the class's :attr:`no_matrix` reason.  Listed before :class:`Mechanism` among
    the bases, so that its ``matrix`` is the one found."""

    #: Why there is no matrix (the ParameterError's message).
    no_matrix: ClassVar[str] = "this mechanism has no matrix form"

    def matrix(self) -> np.ndarray:
        """Not available (:attr:`no_matrix` says why).

        Returns
        -------
        numpy.ndarray
            Never returns.

        Raises
        ------
        ParameterError
            Always, naming ``mechanism``.
        """
        raise ParameterError("mechanism", self.no_matrix)


class _PQRMechanism(Mechanism):
    """Extreme-property mechanism described by the (p, q, r) of [SCW] Table 2."""

    #: matrix rows used as the representative pair (x_1^0, x_1^1) for the primary form
    _pair: ClassVar[tuple[int, int]] = (0, 1)

    @abc.abstractmethod
    def _pqr(self, asymptotic: bool) -> tuple[float, float, float]:
        ...

    @property
    def gamma(self) -> float:
        p, q, r = self._pqr(False)
        return float(2 * p + q + r)

    def decomposition(self, form: str = "simplified"):
        form = _form(form)
        if form == "primary":
            return self._primary(*self._pair)
        p, q, r = self._pqr(form == "asymptotic")
        label = f"{self.name} eps0={self.eps0:g} ({form})"
        return Decomposition.from_pqr(self.eps0, p, q, r, label=label)

    def upper_decompositions(self) -> list:
        return [self.decomposition("simplified")]

    @functools.cached_property
    def _matrix_cache(self) -> np.ndarray:
        P = self._build_matrix()
        P = P / P.sum(axis=1, keepdims=True)
        P.setflags(write=False)
        return P

    def matrix(self) -> np.ndarray:
        self._check_matrix_size()
        return self._matrix_cache

    @abc.abstractmethod
    def _build_matrix(self) -> np.ndarray:
        ...

    @abc.abstractmethod
    def _check_matrix_size(self):
        ...


# ---------------------------------------------------------------------------- k-RR
@dataclass(frozen=True)
class KRR(_PQRMechanism):
    r"""k-ary randomized response on :math:`[k]` ([SCW] Example 4.1, Table 2).

    :math:`\Pr[y = x] = E/(E+k-1)`, :math:`\Pr[y = y'] = 1/(E+k-1)` for each :math:`y' \ne x`.
    Simplified optimal decomposition: :math:`p = 1/(E+k-1)`, :math:`q = 0`, :math:`r = (k-2)p`;
    :math:`\gamma = k/(E+k-1)`. The mechanism is input-symmetric, so one pair suffices.
    There is no domain limit: ``form="asymptotic"`` returns the exact form.

    **Lower-bound dataset** ([SCW] Theorem 14): for :math:`k \ge 3`, :math:`x_1^0 = 0`,
    :math:`x_1^1 = 1`, :math:`x_2 = \dots = x_n = 2` (mutually distinct), giving the 4-atom
    GPARV :math:`E-e` (mass :math:`p`), :math:`1-Ee` (:math:`p`), :math:`(1-e)/E` (:math:`Ep`),
    :math:`1-e` (:math:`(k-3)p`). For :math:`k = 2`: :math:`x_2 = \dots = x_n = x_1^1`, giving
    :math:`E-e` w.p. :math:`1/(E+1)` and :math:`1/E-e` w.p. :math:`E/(E+1)`.

    Parameters
    ----------
    eps0 : float
        ε0 in nats, ``0 < eps0 <= 150`` (:data:`EPS0_MAX`).
    k : int
        Domain size, ``k >= 2``.

    Raises
    ------
    ParameterError
        ``'eps0'`` or ``'k'`` out of range / NaN / not an integer.
    """

    eps0: float
    k: int
    name: ClassVar[str] = "krr"
    param_specs: ClassVar[tuple[Parameter, ...]] = (
        Parameter("k", "int", minimum=2, doc="number of categories"),)

    def __post_init__(self):
        object.__setattr__(self, "eps0", _eps0(self.eps0))
        object.__setattr__(self, "k", _validate.count(self.k, "k", minimum=2))

    def _pqr(self, asymptotic: bool):
        E = math.exp(self.eps0)
        p = 1.0 / (E + self.k - 1)
        return p, 0.0, (self.k - 2) * p

    @property
    def gamma(self) -> float:
        r"""Blanket mass :math:`\gamma = \sum_y \inf_x R(x)(y)` (exact); see :attr:`Mechanism.gamma`."""
        return self.k / (math.exp(self.eps0) + self.k - 1)

    def _check_matrix_size(self):
        _check_entries(self.k * self.k, "k", f"{self.k}-RR")

    def _build_matrix(self):
        E = math.exp(self.eps0)
        P = np.full((self.k, self.k), 1.0 / (E + self.k - 1))
        np.fill_diagonal(P, E / (E + self.k - 1))
        return P

    def lower_decompositions(self) -> list:
        """Theorem-14 decompositions of the documented lower-bound datasets ([SCW] Theorem 14).

        Returns
        -------
        list of GparvFamily
            The lower bound is the maximum over the list.
        """
        E = math.exp(self.eps0)
        k = self.k
        if k == 2:
            c = [1 / (E + 1), E / (E + 1)]
            a = [E / (E + 1), 1 / (E + 1)]
            b = list(c)
            lab = "dataset (0 | 1; others 1)"
        else:
            p = 1.0 / (E + k - 1)
            # outputs x_1^0, x_1^1, x_2, rest
            c = [p, p, E * p, (k - 3) * p]
            a = [E * p, p, p, (k - 3) * p]
            b = [p, E * p, p, (k - 3) * p]
            lab = "dataset (0 | 1; others 2)"
        return [small_decomposition(a, b, c, 0.0, label=lab, simplify=True)]

    def lower_cases(self) -> list:
        """Theorem-14 decompositions tagged with the dataset's shape; see :meth:`Mechanism.lower_cases`.

        Returns
        -------
        list of (tuple, GparvFamily)
            ``(pattern, family)`` pairs, one per entry of :meth:`lower_decompositions`.
        """
        t = "distinct" if self.k >= 3 else "x2=x1"
        return [(("type", t), f) for f in self.lower_decompositions()]

    @property
    def domain(self) -> int:
        """Input-domain size (``None`` = unknown / any); see :attr:`Mechanism.domain`."""
        return self.k

    def variation_ratio_beta(self) -> tuple[float, str]:
        """[WPL24] Table 2, generalized randomized response on k options: β = (E − 1)/(E + k − 1).

        Returns
        -------
        beta : float
            Total-variation parameter in [0, 1).
        source : str
            Where the value comes from.
        """
        return math.expm1(self.eps0) / (math.exp(self.eps0) + self.k - 1), f"Table 2 GRR, d={self.k}"

    def stronger_clone_decomposition(self) -> Decomposition:
        r"""The corrected [FMT23] four-point decomposition, which is this mechanism's optimal one.

        With :math:`p = 1/(E+k-1)` and :math:`q = (k-2)p`: :math:`a = (Ep, p, q)`, :math:`b = (p, Ep, q)`,
        :math:`c = (p, p, q)` ([SCW] Example 4.1); it has the same :func:`~shuffleamp.decomposition.law_key`
        as :meth:`decomposition` (tested), so the simplified optimal decomposition is returned.

        Returns
        -------
        Decomposition
        """
        return self.decomposition("simplified")

    def describe(self) -> dict:
        """JSON-serialisable description: ``{"mechanism": name, "eps0": ..., <parameters>}``.

        Returns
        -------
        dict
            Plain JSON-serialisable mapping (ε0 in nats).
        """
        return {"mechanism": self.name, "eps0": self.eps0, "k": self.k}


# ---------------------------------------------------------------------------- bit mechanisms
#: ``d`` of BLH / RAPPOR / OUE: a finite domain, or None (``none``) for the d → ∞ limit.
_D_BIT = Parameter("d", "int", minimum=2, default=None,
                   doc="domain size; none = the d -> infinity limit (asymptotic bound)")


class _BitMechanism(_PQRMechanism):
    """Common code of BLH / RAPPOR / OUE (domain ``d`` or ``None`` for the d→∞ limit)."""

    d: int | None

    def _validate_common(self):
        object.__setattr__(self, "eps0", _eps0(self.eps0))
        if self.d is not None:
            object.__setattr__(self, "d", _validate.count(self.d, "d", minimum=2))

    def _check_matrix_size(self):
        if self.d is None:
            raise ParameterError("d", f"{self.name} with d=None is the d→∞ limit; it has no matrix form")
        if self.d > MAX_BIT_DOMAIN:
            raise ParameterError("d", f"the {self.name} matrix is only built for d <= {MAX_BIT_DOMAIN} "
                                      f"(it has 2^d outputs), got d={self.d}")

    def _decay(self, base_log1p: float) -> float:
        """(1 + x)^{-(d-2)} given log1p(x) (0 for d = None)."""
        if self.d is None:
            return 0.0
        return math.exp(-(self.d - 2) * base_log1p)

    # bit-indicator lower bound ([SCW] Theorem 14): R(x)(y) ∝ E^{u_x(y)}
    @abc.abstractmethod
    def _bit_laws(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """((Pr[u_x = 1], Pr[u_x = 0]) for x ≠ x_2, (Pr[u_{x_2} = 1], Pr[u_{x_2} = 0])) under y ~ R(x_2).

        Both probabilities of each pair are closed forms (no ``1 - p`` cancellation at large ε0).
        """

    def lower_decompositions(self) -> list:
        E = math.exp(self.eps0)
        pi_other, pi_self = self._bit_laws()
        same = _bit_lower(E, pi_other, pi_other, pi_self, True, "dataset (0 | 1; others 1)")
        if self.d == 2:
            return [same]
        # d >= 3: the Theorem-14 dataset (others at a third value) and the dataset with the others at x_1^1
        # (the worst dataset of the enumeration at small n for BLH; the same bit-indicator form, u_1 = u_2).
        # Enumerating every dataset (others at x_1^0, x_1^1 and at up to 3 distinct third values for n <= 5,
        # 2 for n <= 7, 1 for n <= 12: tests/test_bit_oracle.py) finds none worse than these two; at large n
        # the log-likelihood ratio's variance v^T (sum_x w_x Cov_x)^+ v is convex in the others' weights w,
        # so no mixed or spread dataset beats the best single value to leading order.  The bracket left at
        # large n is the decomposition upper's (its other users are blanket-only), not this list's.
        return [_bit_lower(E, pi_other, pi_other, pi_self, False, "dataset (0 | 1; others 2)"), same]

    def lower_cases(self) -> list:
        decs = self.lower_decompositions()
        if self.d == 2:
            return [(("type", "x2=x1"), decs[0])]
        # each dataset tagged with its own shape, so that a parallel composition mixes only laws of one dataset
        return [(("type", "distinct"), decs[0]), (("type", "x2=x1"), decs[1])]

    @property
    def domain(self) -> int | None:
        return self.d

    def describe(self) -> dict:
        return {"mechanism": self.name, "eps0": self.eps0, "d": self.d}


@dataclass(frozen=True)
class BLH(_BitMechanism):
    r"""Binary local hashing ([SCW] Appendix A.1, Tables 2 and 3).

    :math:`\mathrm{BLH}(x) = (h, \mathrm{RR}_{\varepsilon_0}(h(x)))` with :math:`h` uniform over
    all :math:`2^d` functions :math:`[d] \to \{0,1\}` and binary randomized response keeping the
    bit w.p. :math:`E/(E+1)`. Matrix form: rows :math:`x \in [d]`, column ``2*h + bit`` with
    ``h(x) = (h >> x) & 1``; built for ``d <= 12`` only.

    Exact coefficients (Table 2): :math:`p = 1/(2(E+1))`,
    :math:`q = 1/(2(E+1)) - 1/(2^{d-1}(E+1))`, :math:`r = 1/(2(E+1)) + E/(2^{d-1}(E+1))`,
    :math:`\gamma = 2/(E+1) + (E-1)/(2^{d-1}(E+1))`. With ``d=None`` the mechanism is the
    :math:`d \to \infty` limit (Table 3, :math:`p = q = r = 1/(2(E+1))`,
    :math:`\gamma = 2/(E+1)`), which is what the paper's experiments use; it is a limit,
    not a bound for any finite ``d``.

    **Lower-bound dataset** ([SCW] Theorem 14, bit-indicator form derived here): for ``d >= 3`` or ``d=None``,
    :math:`x_1^0 = 0, x_1^1 = 1, x_2 = \dots = x_n = 2` (mutually distinct; the GPARV is the same
    for every ``d >= 3``); for ``d = 2``, :math:`x_2 = \dots = x_n = x_1^1 = 1`. The GPARV is
    :math:`(E^{u_0} - e E^{u_1})/E^{u_2}` with independent bits :math:`u_j` at
    :math:`x_1^0, x_1^1, x_2` under :math:`y \sim R(x_2)`
    (BLH: :math:`u_0, u_1 \sim` Bern(1/2),
    :math:`u_2 \sim` Bern(E/(1+E)), :math:`u_j = [h(x_j) = y]`).

    Parameters
    ----------
    eps0 : float
        ε0 in nats, ``0 < eps0 <= 150`` (:data:`EPS0_MAX`).
    d : int or None, optional
        Input-domain size ``d >= 2``; ``None`` (default) for the asymptotic limit.

    Raises
    ------
    ParameterError
        ``'eps0'`` or ``'d'`` out of range / NaN / not an integer.
    """

    eps0: float
    d: int | None = None
    name: ClassVar[str] = "blh"
    param_specs: ClassVar[tuple[Parameter, ...]] = (_D_BIT,)

    def __post_init__(self):
        self._validate_common()

    def _pqr(self, asymptotic: bool):
        E = math.exp(self.eps0)
        h = 0.5 / (E + 1)
        dec = 0.0 if asymptotic else self._decay(math.log(2.0))     # 2^{-(d-2)}
        return h, h * (1.0 - dec), h * (1.0 + E * dec)

    def _build_matrix(self):
        E = math.exp(self.eps0)
        d = self.d
        hs = np.arange(2 ** d, dtype=np.int64)
        hx = (hs[None, :] >> np.arange(d, dtype=np.int64)[:, None]) & 1        # (d, 2^d): h(x)
        P = np.empty((d, 2 ** (d + 1)))
        base = 1.0 / ((E + 1) * 2 ** d)
        P[:, 0::2] = np.where(hx == 0, E, 1.0) * base
        P[:, 1::2] = np.where(hx == 1, E, 1.0) * base
        return P

    def _bit_laws(self):
        E = math.exp(self.eps0)
        return (0.5, 0.5), (E / (1 + E), 1 / (1 + E))

    def variation_ratio_beta(self) -> tuple[float, str]:
        """[WPL24] Table 2, local hash with length l = 2: β = (E − 1)/(E + 1).

        This is the table value; the exact total variation with the hash in the output is half of it.

        Returns
        -------
        beta : float
            Total-variation parameter in [0, 1).
        source : str
            Where the value comes from.
        """
        return math.tanh(self.eps0 / 2), "Table 2 local hash, l=2"


@dataclass(frozen=True)
class RAPPOR(_BitMechanism):
    r"""Basic one-time RAPPOR / symmetric unary encoding ([SCW] Appendix A.2, Tables 2 and 3).

    Unary encoding of :math:`x \in [d]`, each bit through binary randomized response at
    :math:`\varepsilon_0/2` (keep w.p. :math:`t/(1+t)`, :math:`t = e^{\varepsilon_0/2}`):
    :math:`\Pr[y \mid x] = t^{d - d_H(e_x, y)}/(1+t)^d`. Matrix over :math:`y \in \{0,1\}^d`
    (column index with bit ``i`` = ``y[i]``), built for ``d <= 12`` only.

    Exact coefficients (Table 2): :math:`p = 1/(t+1)^2`,
    :math:`q = t^{-1}/(t+1)^2 - t^{-1}/(t+1)^d`, :math:`r = t/(t+1)^2 + t/(t+1)^d`,
    :math:`\gamma = e^{-\varepsilon_0/2} + (t - 1/t)/(1+t)^d`. ``d=None``: the limit
    (Table 3, :math:`q = 1/(t(t+1)^2)`, :math:`r = t/(t+1)^2`, :math:`\gamma = 1/t`).

    **Lower-bound dataset** ([SCW] Theorem 14, bit-indicator form derived here): for ``d >= 3`` or ``d=None``,
    :math:`x_1^0 = 0, x_1^1 = 1, x_2 = \dots = x_n = 2` (mutually distinct; the GPARV is the same
    for every ``d >= 3``); for ``d = 2``, :math:`x_2 = \dots = x_n = x_1^1 = 1`. The GPARV is
    :math:`(E^{u_0} - e E^{u_1})/E^{u_2}` with independent bits :math:`u_j` at
    :math:`x_1^0, x_1^1, x_2` under :math:`y \sim R(x_2)`
    (RAPPOR: :math:`u_0, u_1 \sim` Bern(1/(1+t)),
    :math:`u_2 \sim` Bern(t/(1+t)), :math:`u_j = y[x_j]`).

    Parameters
    ----------
    eps0 : float
        ε0 in nats, ``0 < eps0 <= 150`` (:data:`EPS0_MAX`) (the whole report is ε0-LDP).
    d : int or None, optional
        Input-domain size ``d >= 2``; ``None`` (default) for the asymptotic limit.

    Raises
    ------
    ParameterError
        ``'eps0'`` or ``'d'`` out of range / NaN / not an integer.
    """

    eps0: float
    d: int | None = None
    name: ClassVar[str] = "rappor"
    param_specs: ClassVar[tuple[Parameter, ...]] = (_D_BIT,)

    def __post_init__(self):
        self._validate_common()

    def _pqr(self, asymptotic: bool):
        t = math.exp(self.eps0 / 2)
        p = 1.0 / (t + 1) ** 2
        dec = 0.0 if asymptotic else self._decay(math.log1p(t))     # (1+t)^{-(d-2)}
        return p, p / t * (1.0 - dec), p * t * (1.0 + dec)

    def _build_matrix(self):
        d = self.d
        h = self.eps0 / 2
        ys = np.arange(2 ** d, dtype=np.int64)
        bits = (ys[None, :] >> np.arange(d, dtype=np.int64)[:, None]) & 1    # (d, 2^d): y[x]
        w = _popcount(ys)[None, :]
        dist = w + 1 - 2 * bits                                              # d_H(e_x, y)
        return np.exp((d - dist) * h - d * math.log1p(math.exp(h)))

    def _bit_laws(self):
        t = math.exp(self.eps0 / 2)
        return (1 / (1 + t), t / (1 + t)), (t / (1 + t), 1 / (1 + t))

    def variation_ratio_beta(self) -> tuple[float, str]:
        """[WPL24] Table 2, binary randomized response (RAPPOR): β = (t − 1)/(t + 1), t = e^{ε0/2}.

        Returns
        -------
        beta : float
            Total-variation parameter in [0, 1).
        source : str
            Where the value comes from.
        """
        return math.tanh(self.eps0 / 4), "Table 2 binary RR (RAPPOR)"


@dataclass(frozen=True)
class OUE(_BitMechanism):
    r"""Optimized unary encoding ([SCW] Appendix A.3, Tables 2 and 3).

    Unary encoding of :math:`x \in [d]`; the 1-bit is replaced by a fair coin, each 0-bit is
    reported as 1 w.p. :math:`1/(1+E)`:
    :math:`\Pr[y \mid x] = E^{d-1-(|y| - y[x])}/(2(1+E)^{d-1})`. Matrix over
    :math:`\{0,1\}^d`, built for ``d <= 12`` only.

    Exact coefficients (Table 2): :math:`p = 1/(2(E+1))`,
    :math:`q = E^{-1}/(2(E+1)) - E^{-1}/(2(E+1)^{d-1})`,
    :math:`r = E/(2(E+1)) + 1/(2(E+1)^{d-1})`,
    :math:`\gamma = (1+E)/(2E) + (1 - 1/E)/(2(1+E)^{d-1})`. ``d=None``: the limit
    (Table 3, :math:`q = 1/(2E(E+1))`, :math:`r = E/(2(E+1))`, :math:`\gamma = (1+E)/(2E)`).

    **Lower-bound dataset** ([SCW] Theorem 14, bit-indicator form derived here): for ``d >= 3`` or ``d=None``,
    :math:`x_1^0 = 0, x_1^1 = 1, x_2 = \dots = x_n = 2` (mutually distinct; the GPARV is the same
    for every ``d >= 3``); for ``d = 2``, :math:`x_2 = \dots = x_n = x_1^1 = 1`. The GPARV is
    :math:`(E^{u_0} - e E^{u_1})/E^{u_2}` with independent bits :math:`u_j` at
    :math:`x_1^0, x_1^1, x_2` under :math:`y \sim R(x_2)`
    (OUE: :math:`u_0, u_1 \sim` Bern(1/(1+E)),
    :math:`u_2 \sim` Bern(1/2), :math:`u_j = y[x_j]`).

    Parameters
    ----------
    eps0 : float
        ε0 in nats, ``0 < eps0 <= 150`` (:data:`EPS0_MAX`).
    d : int or None, optional
        Input-domain size ``d >= 2``; ``None`` (default) for the asymptotic limit.

    Raises
    ------
    ParameterError
        ``'eps0'`` or ``'d'`` out of range / NaN / not an integer.
    """

    eps0: float
    d: int | None = None
    name: ClassVar[str] = "oue"
    param_specs: ClassVar[tuple[Parameter, ...]] = (_D_BIT,)

    def __post_init__(self):
        self._validate_common()

    def _pqr(self, asymptotic: bool):
        E = math.exp(self.eps0)
        h = 0.5 / (E + 1)
        dec = 0.0 if asymptotic else self._decay(math.log1p(E))     # (1+E)^{-(d-2)}
        return h, h / E * (1.0 - dec), h * (E + dec)

    def _build_matrix(self):
        d = self.d
        ys = np.arange(2 ** d, dtype=np.int64)
        bits = (ys[None, :] >> np.arange(d, dtype=np.int64)[:, None]) & 1
        w = _popcount(ys)[None, :]
        zeros_elsewhere = d - 1 - (w - bits)
        return np.exp(zeros_elsewhere * self.eps0 - math.log(2.0) - (d - 1) * math.log1p(math.exp(self.eps0)))

    def _bit_laws(self):
        E = math.exp(self.eps0)
        return (1 / (1 + E), E / (1 + E)), (0.5, 0.5)

    def variation_ratio_beta(self) -> tuple[float, str]:
        """β = (E − 1)/(2(E + 1)): not in [WPL24]; derived here as the total variation of two OUE rows.

        Returns
        -------
        beta : float
            Total-variation parameter in [0, 1).
        source : str
            Where the value comes from.
        """
        return math.tanh(self.eps0 / 2) / 2, "OUE (derived: total variation of two rows)"


# ---------------------------------------------------------------------------- Hadamard response
@dataclass(frozen=True)
class HadamardResponse(_PQRMechanism):
    r"""Hadamard response ([SCW] Appendix A.4, with
    finite-d corrections derived here).

    ``d`` is the order of the Sylvester–Hadamard matrix :math:`H_{x,y} = (-1)^{x \odot y}`.
    Inputs are the :math:`d - 1` **non-zero** rows :math:`x = 1, \dots, d-1` (row 0 is all
    +1; allowing it breaks the extreme property), outputs are all :math:`d` columns, and
    :math:`\Pr[HR(x) = y] = \exp((\varepsilon_0/2) H_{x,y})/Z_x`, i.e. :math:`2E/(d(E+1))` or
    :math:`2/(d(E+1))`. Matrix row ``i`` is Hadamard row ``i + 1``.

    Exact coefficients (corrected; the paper's Table 2 row :math:`p = q = r = 1/(2(E+1))` ignores
    column 0 and holds only as :math:`d \to \infty`):
    :math:`p = 1/(2(E+1))`, :math:`q = 1/(2(E+1)) - 2/(d(E+1))`,
    :math:`r = 1/(2(E+1)) + 2E/(d(E+1))`, :math:`\gamma = 2/(E+1) + 2(E-1)/(d(E+1))`.
    Any two distinct non-zero rows are linearly independent over GF(2), so every pair has
    the same decomposition (one upper entry). ``form="asymptotic"`` gives the paper's row.

    **Lower-bound datasets** (derived here; the paper does not discuss HR), with
    :math:`x_1^0 = 1, x_1^1 = 2` and :math:`x_2 = \dots = x_n` distinct from both:

    * :math:`x_2 = x_1^0 \oplus x_1^1 = 3` (the only choice when ``d = 4``): GPARV
      :math:`1-e` w.p. :math:`E/(2(E+1))`, :math:`(1-e)/E` w.p. :math:`E/(2(E+1))`,
      :math:`E-e` w.p. :math:`1/(2(E+1))`, :math:`1-Ee` w.p. :math:`1/(2(E+1))`;
    * :math:`x_2 = 4`, linearly independent of :math:`x_1^0, x_1^1` (``d >= 8``): the BLH law,
      :math:`(E^{u_0} - eE^{u_1})/E^{u_2}` with :math:`u_0, u_1 \sim` Bern(1/2),
      :math:`u_2 \sim` Bern(E/(1+E)).

    Both are returned when ``d >= 8`` (the lower bound is their maximum). For
    ``d <= 1024`` they are computed from the three matrix rows, above from the closed forms
    (which the tests check against the matrix).

    Parameters
    ----------
    eps0 : float
        ε0 in nats, ``0 < eps0 <= 150`` (:data:`EPS0_MAX`).
    d : int
        Hadamard order, a power of 2, ``d >= 4``.

    Raises
    ------
    ParameterError
        ``'eps0'`` invalid; ``'d'`` not an integer, ``< 4`` or not a power of 2.
    """

    eps0: float
    d: int
    name: ClassVar[str] = "hr"
    param_specs: ClassVar[tuple[Parameter, ...]] = (
        Parameter("d", "int", minimum=4, doc="Hadamard order, a power of 2"),)

    def __post_init__(self):
        object.__setattr__(self, "eps0", _eps0(self.eps0))
        d = _validate.count(self.d, "d", minimum=4)
        if d & (d - 1):
            raise ParameterError("d", f"the Hadamard order must be a power of 2, got {d}")
        object.__setattr__(self, "d", d)

    def _pqr(self, asymptotic: bool):
        E = math.exp(self.eps0)
        h = 0.5 / (E + 1)
        if asymptotic:
            return h, h, h
        return h, h * (1.0 - 4.0 / self.d), h * (1.0 + 4.0 * E / self.d)

    @property
    def gamma(self) -> float:
        r"""Blanket mass :math:`\gamma = \sum_y \inf_x R(x)(y)` (exact); see :attr:`Mechanism.gamma`."""
        E = math.exp(self.eps0)
        return 2.0 / (E + 1) + 2.0 * (E - 1) / (self.d * (E + 1))

    def _check_matrix_size(self):
        _check_entries((self.d - 1) * self.d, "d", f"HR of order {self.d}")

    def _rows(self, xs) -> np.ndarray:
        E = math.exp(self.eps0)
        H = _hadamard_sign(xs, np.arange(self.d))
        return np.where(H > 0, 2 * E / (self.d * (E + 1)), 2 / (self.d * (E + 1)))

    def _build_matrix(self):
        return self._rows(np.arange(1, self.d))

    def _lower_closed_form(self) -> list:
        E = math.exp(self.eps0)
        hi, lo = E / (2 * (E + 1)), 1 / (2 * (E + 1))
        # x2 = x0 xor x1: (s0, s1) = (0,0), (1,1), (0,1), (1,0) with s2 = s0 xor s1
        c = [hi, hi, lo, lo]
        a = [hi, hi / E, lo * E, lo]
        b = [hi, hi / E, lo, lo * E]
        out = [small_decomposition(a, b, c, 0.0, label="dataset (1 | 2; others 3 = 1 xor 2)", simplify=True)]
        if self.d >= 8:
            out.append(_bit_lower(E, (0.5, 0.5), (0.5, 0.5), (E / (1 + E), 1 / (1 + E)), False,
                                  "dataset (1 | 2; others 4, independent)"))
        return out

    def lower_decompositions(self) -> list:
        """Theorem-14 decompositions of the documented lower-bound datasets ([SCW] Theorem 14).

        Returns
        -------
        list of GparvFamily
            The lower bound is the maximum over the list.
        """
        if self.d > HR_LOWER_FROM_MATRIX_MAX_D:
            return self._lower_closed_form()
        x2s = [3] + ([4] if self.d >= 8 else [])
        rows = self._rows([1, 2] + x2s)
        rows = rows / rows.sum(axis=1, keepdims=True)
        out = []
        for i, x2 in enumerate(x2s):
            lab = "dataset (1 | 2; others 3 = 1 xor 2)" if x2 == 3 else "dataset (1 | 2; others 4, independent)"
            # Decomposition(rows[0], rows[1], rows[2 + i], 0.0).simplified(), built and keyed by the compiled
            # constructor
            out.append(small_decomposition(rows[0], rows[1], rows[2 + i], 0.0, label=lab, simplify=True))
        return out

    def lower_cases(self) -> list:
        # matrix rows i = Hadamard rows i + 1: (1 | 2; 3) -> (0, 1, 2), (1 | 2; 4) -> (0, 1, 3)
        """Theorem-14 decompositions tagged with the dataset's shape; see :meth:`Mechanism.lower_cases`.

        Returns
        -------
        list of (tuple, GparvFamily)
            ``(pattern, family)`` pairs, one per entry of :meth:`lower_decompositions`.
        """
        return [(("triple", t), f) for t, f in zip([(0, 1, 2), (0, 1, 3)], self.lower_decompositions())]

    @property
    def domain(self) -> int:
        """Input-domain size (``None`` = unknown / any); see :attr:`Mechanism.domain`."""
        return self.d - 1

    def variation_ratio_beta(self) -> tuple[float, str]:
        r"""[WPL24] Table 2, Hadamard response with K = d, s = d/2, B = 1: β = s(E−1)/2/(sE+K−s) = (E−1)/(2(E+1)).

        Returns
        -------
        beta : float
            Total-variation parameter in [0, 1).
        source : str
            Where the value comes from.
        """
        return math.tanh(self.eps0 / 2) / 2, "Table 2 Hadamard response (K=d, s=d/2, B=1)"

    def describe(self) -> dict:
        """JSON-serialisable description: ``{"mechanism": name, "eps0": ..., <parameters>}``.

        Returns
        -------
        dict
            Plain JSON-serialisable mapping (ε0 in nats).
        """
        return {"mechanism": self.name, "eps0": self.eps0, "d": self.d}


# ---------------------------------------------------------------------------- Laplace
def inv_sqrt_mgf(c, a: float, b: float):
    r"""Closed forms :math:`I = \int_a^b e^{cw} w^{-3/2} dw` and :math:`J = \int_a^b e^{cw} w^{-1/2} dw`.

    With :math:`k = \sqrt{-c}` (principal) and the Faddeeva function :math:`w` (``scipy.special.wofz``,
    :math:`\operatorname{erfc}(\zeta) = e^{-\zeta^2} w(i\zeta)`, bounded since
    :math:`\operatorname{Im}(ik\sqrt a) \ge 0`):
    :math:`J = \tfrac{\sqrt\pi}{k}[e^{ca}w(ik\sqrt a) - e^{cb}w(ik\sqrt b)]` and, integrating by parts,
    :math:`I = 2e^{ca}/\sqrt a - 2e^{cb}/\sqrt b - 2k^2 J` (derived here).

    Parameters
    ----------
    c : array_like of complex
        Exponent, ``c != 0``.
    a, b : float
        Integration limits, ``0 < a < b``.

    Returns
    -------
    I, J : ndarray of complex128
        Same shape as ``c`` (``inf`` where the integrals leave the double range; see
        :func:`inv_sqrt_mgf_scaled` for the overflow-free form).
    """
    I, J, shift = inv_sqrt_mgf_scaled(c, a, b)
    with np.errstate(over="ignore", invalid="ignore"):
        f = np.exp(shift)
        return I * f, J * f


def inv_sqrt_mgf_scaled(c, a: float, b: float):
    r"""The integrals of :func:`inv_sqrt_mgf` scaled by :math:`e^{-s}`, with :math:`s` the larger of
    :math:`ca, cb` in real part (so no intermediate exponential exceeds 1 in modulus).

    Parameters
    ----------
    c : array_like of complex
        Exponent, ``c != 0``.
    a, b : float
        Integration limits, ``0 < a < b``.

    Returns
    -------
    I, J : ndarray of complex128
        :math:`I e^{-s}` and :math:`J e^{-s}`, same shape as ``c``.
    shift : ndarray of complex128
        :math:`s` (``ca`` or ``cb`` elementwise); the caller multiplies by :math:`e^{s}` together with its
        own prefactors, in one exponential.
    """
    from scipy.special import wofz

    c = np.asarray(c, dtype=np.complex128)
    k = np.sqrt(-c)
    sa, sb = math.sqrt(a), math.sqrt(b)
    ca, cb = c * a, c * b
    shift = np.where(ca.real >= cb.real, ca, cb)
    ea, eb = np.exp(ca - shift), np.exp(cb - shift)
    diff = ea * wofz(1j * k * sa) - eb * wofz(1j * k * sb)
    J = math.sqrt(math.pi) / k * diff
    I = 2.0 * ea / sa - 2.0 * eb / sb - 2.0 * math.sqrt(math.pi) * k * diff
    return I, J, shift


def _scaled_product(x, log_factor):
    """``x * exp(log_factor)`` elementwise (complex arrays) without an intermediate overflow: the modulus of
    ``x`` joins the exponent (``inf`` only where the product itself leaves the double range)."""
    x = np.asarray(x, dtype=np.complex128)
    lf = np.broadcast_to(np.asarray(log_factor, dtype=np.complex128), x.shape)
    m = np.abs(x)
    out = np.zeros_like(x)
    nz = m > 0.0
    with np.errstate(over="ignore"):
        mod = np.exp(lf[nz].real + np.log(m[nz]))            # inf where the product leaves the range
    u = np.exp(1j * lf[nz].imag) * (x[nz] / m[nz])             # unit phase
    # real and imaginary parts separately, so that an infinite modulus never meets a 0 (inf * 0 = NaN)
    re = np.where(u.real == 0.0, 0.0, mod * np.where(u.real == 0.0, 1.0, u.real))
    im = np.where(u.imag == 0.0, 0.0, mod * np.where(u.imag == 0.0, 1.0, u.imag))
    out.real[nz] = re
    out.imag[nz] = im
    return out


def laplace_upper_gparv(eps0: float, epsilon: float) -> Gparv:
    r"""Blanket GPARV of the Laplace mechanism on {0, 1} ([SCW] Theorem 13 with the Laplace blanket;
    CDF derived here).

    γ = e^{-ε0/2}; G = 0 w.p. 1 − γ; otherwise G = L/γ with end atoms of mass
    e^{-ε0/2}/2 (times γ) at :math:`1 - Ee^\varepsilon` and :math:`E - e^\varepsilon`, and
    continuous CDF :math:`\tfrac12\sqrt{e^\varepsilon/(1-s)}` on
    :math:`[1-Ee^\varepsilon, 1-e^\varepsilon)`, :math:`1 - \tfrac12 (s+e^\varepsilon)^{-1/2}` on
    :math:`[1-e^\varepsilon, E-e^\varepsilon)`.

    Parameters
    ----------
    eps0 : float
        Local ε0 in nats (noise scale 1/ε0, sensitivity 1).
    epsilon : float
        Central ε in nats.

    Returns
    -------
    Gparv
        Three atoms and a continuous part with closed-form cdf, icdf, density and MGF.
    """
    E = math.exp(eps0)
    e = math.exp(epsilon)
    t = math.exp(-eps0 / 2)          # = gamma = end-atom size of F
    gamma = t
    lo, mid, hi = 1 - E * e, 1 - e, E - e

    def F(s):  # CDF of L/gamma including its atoms (right-continuous), valid on [lo, hi)
        s = np.asarray(s, dtype=np.float64)
        with np.errstate(over="ignore", divide="ignore"):   # the branch not taken may overflow
            out = np.where(s < mid, 0.5 * np.sqrt(e / np.maximum(1 - s, 1e-300)),
                           1 - 0.5 / np.sqrt(np.maximum(s + e, 1e-300)))
        return out

    def cdf(s):
        s = np.clip(np.asarray(s, dtype=np.float64), lo, hi)
        val = F(np.minimum(s, np.nextafter(hi, -np.inf))) - t / 2
        return gamma * np.where(s >= hi, 1 - t, np.clip(val, 0, 1 - t))

    def icdf(s):
        s = np.clip(np.asarray(s, dtype=np.float64), lo, hi)
        # \int_lo^s F(u) du piecewise, minus (t/2)(s - lo)
        s1 = np.minimum(s, mid)
        part1 = math.sqrt(e) * (np.sqrt(1 - lo) - np.sqrt(1 - s1))
        s2 = np.maximum(s, mid)
        part2 = (s2 - mid) - (np.sqrt(s2 + e) - 1.0)
        return gamma * (part1 + part2 - (t / 2) * (s - lo))

    def density(s):
        s = np.asarray(s, dtype=np.float64)
        return gamma * np.where(s < mid, 0.25 * math.sqrt(e) * np.maximum(1 - s, e) ** -1.5,
                                0.25 * np.maximum(s + e, 1.0) ** -1.5)

    def mgf(z):
        # s < mid: u = 1 - s in [e, E e]; s > mid: w = s + e in [1, E]
        z = np.asarray(z, dtype=np.complex128)
        I1, J1, s1 = inv_sqrt_mgf_scaled(-z, e, E * e)
        I2, J2, s2 = inv_sqrt_mgf_scaled(z, 1.0, E)
        # prefactors, the scales of the integrals and the integrals' moduli in one exponential each: no
        # intermediate overflow when M(z) itself is in range (e^{zE} alone overflows at eps0 ~ 30)
        l1 = math.log(gamma * 0.25 * math.sqrt(e)) + z + s1
        l2 = math.log(gamma * 0.25) - z * e + s2
        M = _scaled_product(I1, l1) + _scaled_product(I2, l2)
        dM = _scaled_product(I1 - J1, l1) + _scaled_product(J2 - e * I2, l2)
        return M, dM

    cont = ContinuousPart(lo, hi, gamma * (1 - t), cdf, icdf, density, (mid,), mgf, ((1.0,), (-e,)))
    return Gparv(np.array([lo, hi, 0.0]), np.array([gamma * t / 2, gamma * t / 2, 1 - gamma]), cont)


def laplace_lower_gparv(eps0: float, epsilon: float) -> Gparv:
    r"""Theorem-14 GPARV of Laplace on {0, 1} with x_1^0 = 0, x_1^1 = x_2 = … = x_n = 1 ([SCW] Theorem 14).

    G = r − e^ε with r = R(0)(y)/R(1)(y), y ~ R(1): atom E w.p. e^{-ε0}/2, atom e^{-ε0} w.p. 1/2,
    and Pr[r ≤ s] = 1 − e^{-ε0/2}/(2√s) on (e^{-ε0}, E) (derived here).

    Parameters
    ----------
    eps0 : float
        Local ε0 in nats.
    epsilon : float
        Central ε in nats.

    Returns
    -------
    Gparv
        Two atoms and a continuous part with closed forms.
    """
    E = math.exp(eps0)
    e = math.exp(epsilon)
    t = math.exp(-eps0 / 2)
    lo, hi = 1 / E - e, E - e

    def cdf(s):
        s = np.clip(np.asarray(s, dtype=np.float64), lo, hi)
        with np.errstate(divide="ignore"):      # s + e rounds to 0 at lo when 1/E < ulp(e): F = 0 there
            return np.clip(0.5 - t / (2 * np.sqrt(s + e)), 0.0, 0.5 - 0.5 / E)

    def icdf(s):
        s = np.clip(np.asarray(s, dtype=np.float64), lo, hi)
        return 0.5 * (s - lo) - t * (np.sqrt(s + e) - t)

    def density(s):
        return 0.25 * t * np.maximum(np.asarray(s, dtype=np.float64) + e, 1.0 / E) ** -1.5

    def mgf(z):
        z = np.asarray(z, dtype=np.complex128)
        I, J, sh = inv_sqrt_mgf_scaled(z, 1.0 / E, E)      # w = s + e in [1/E, E]
        lc = math.log(0.25 * t) - z * e + sh
        return _scaled_product(I, lc), _scaled_product(J - e * I, lc)

    cont = ContinuousPart(lo, hi, 0.5 - 0.5 / E, cdf, icdf, density, (), mgf, ((-e,),))
    return Gparv(np.array([lo, hi]), np.array([0.5, 0.5 / E]), cont)


# ------------------------------------------------------------------ Laplace as finite decompositions
#: Cells per side of the log-ratio grid of :func:`laplace_spread_decomposition` / :func:`laplace_cells_lower`
#: for n users (:func:`laplace_cells`): from LAPLACE_FINE_MIN_N on, a log-ratio step of at most
#: LAPLACE_CELL_LOG_RATIO within [LAPLACE_CELLS_MIN, LAPLACE_CELLS_MAX] cells (at most LAPLACE_CELLS_MID below
#: LAPLACE_LARGE_N; a narrow Bromwich bell: the cost grows slowly with the atoms); below LAPLACE_FINE_MIN_N,
#: LAPLACE_CELLS_SMALL_N cells (there the integrand hardly decays and the cost is nodes x atoms; measured
#: fastest of 4 .. 24 at n <= 20).  The grid decides tightness only, never soundness.
LAPLACE_CELL_LOG_RATIO = 0.05
LAPLACE_CELLS_MIN = 32
LAPLACE_CELLS_MID = 64
LAPLACE_CELLS_MAX = 160
LAPLACE_CELLS_SMALL_N = 24
LAPLACE_FINE_MIN_N = 2000
LAPLACE_LARGE_N = 100_000
#: Relative margin by which the spread weight of a cell's upper end point is rounded up.
_SPREAD_MARGIN = 1e-9
#: The exact evaluator's ε search for Laplace is refused up front (:meth:`Laplace.refuse_slow_epsilon`) in the band
#: where it takes seconds: few expected blanket reports :math:`n e^{-\varepsilon_0/2}` next to laws whose ratios
#: span :math:`e^{\varepsilon_0}`.  Rows (ε0 at least, n at least, expected blanket reports at most), measured on
#: the 2-core machine at δ = 1e-4, 1e-6, 1e-10: 0.4 - 2.1 s of CPU per query inside the band, 14 - 190 ms outside
#: it (ε0 <= 50).
LAPLACE_SLOW_BAND = ((17.0, 100_000, 40.0), (25.0, 100_000, 2000.0), (30.0, 10_000, 2000.0), (40.0, 1000, 2000.0))


def laplace_cells(eps0: float, n: int) -> int:
    """Cells per side of the Laplace decompositions used for n users (a deterministic rule of (ε0, n)).

    Parameters
    ----------
    eps0 : float
        Local ε0 in nats.
    n : int
        Number of users.

    Returns
    -------
    int
        See :data:`LAPLACE_CELL_LOG_RATIO`.
    """
    if n < LAPLACE_FINE_MIN_N:
        return LAPLACE_CELLS_SMALL_N
    cap = LAPLACE_CELLS_MID if n < LAPLACE_LARGE_N else LAPLACE_CELLS_MAX
    return int(min(max(math.ceil(eps0 / LAPLACE_CELL_LOG_RATIO), LAPLACE_CELLS_MIN), cap))


def ratio_spread_components(log_ratio: np.ndarray, c_lo: np.ndarray, c_hi: np.ndarray, tail: float):
    r"""Components of the blanket decomposition of a mirror-symmetric pair whose latent ratio is spread onto a grid.

    For a pair :math:`(R_0, R_1)` mirror-symmetric about the blanket, where on one side
    :math:`(A, B) = (R_0/m, R_1/m) = (e^u, 1)` and on the other :math:`(1, e^u)` (u >= 0 the log-ratio), the
    blanket mass of each side is placed on the grid ``log_ratio`` (:math:`u_0 = 0 < \dots < u_K`): cell k
    gives ``c_lo[k]`` to node k and ``c_hi[k]`` to node k + 1, and ``tail`` (mass at or beyond :math:`u_K`,
    capped there) goes to node K.  Components: :math:`(a, b, c) = (c_j e^{u_j}, c_j, c_j)` (one side),
    :math:`(c_j, c_j e^{u_j}, c_j)` (the other), the two nodes at u = 0 merged (zero masses dropped).

    Parameters
    ----------
    log_ratio : ndarray, shape (K + 1,)
        Grid nodes u, increasing, starting at 0.
    c_lo, c_hi : ndarray, shape (K,)
        Blanket mass of each cell (one side) given to its lower and upper node.
    tail : float
        Blanket mass (one side) at the last node.

    Returns
    -------
    a, b, c : ndarray
        The components (``c`` > 0); the mass outside the blanket is the caller's β = 1 − γ.
    """
    node_c = np.zeros(log_ratio.size)
    node_c[:-1] += c_lo
    node_c[1:] += c_hi
    node_c[-1] += tail
    a_side = node_c * np.exp(log_ratio)
    a = np.concatenate([[2 * a_side[0]], a_side[1:], node_c[1:]])
    b = np.concatenate([[2 * node_c[0]], node_c[1:], a_side[1:]])
    c = np.concatenate([[2 * node_c[0]], node_c[1:], node_c[1:]])
    keep = c > 0
    return a[keep], b[keep], c[keep]


@functools.lru_cache(maxsize=64)
def laplace_spread_decomposition(eps0: float, cells: int) -> Decomposition:
    r"""Finite decomposition dominating the Laplace blanket GPARV in convex order at every ε ([SCW] Theorem 13).

    Derivation (here).  For :math:`R(x) = x + \mathrm{Lap}(1/\varepsilon_0)` on {0, 1} the blanket is
    :math:`m = \min(R_0, R_1)`, :math:`\gamma = e^{-\varepsilon_0/2}`.  For :math:`y \in (0, 1/2)`,
    :math:`m = R_1` and :math:`(A, B) = (R_0/m, R_1/m) = (e^u, 1)` with :math:`u = \varepsilon_0(1 - 2y)`;
    for :math:`y < 0`, :math:`(A, B) = (E, 1)`; the other side is the mirror image.  In u the blanket mass of
    one side has density :math:`\tfrac14 e^{-(\varepsilon_0+u)/2}` on :math:`(0, \varepsilon_0)` and an atom
    :math:`\tfrac12 e^{-\varepsilon_0}` at :math:`u = \varepsilon_0`; its A-mass (the :math:`R_0`-mass) has
    density :math:`\tfrac14 e^{(u-\varepsilon_0)/2}`.  On a cell :math:`[u_k, u_{k+1}]` (width h) these are

    .. math::

        c_k = -\tfrac12 e^{-(\varepsilon_0+u_k)/2}\,\mathrm{expm1}(-h/2),\qquad
        a_k = \tfrac12 e^{(u_k-\varepsilon_0)/2}\,\mathrm{expm1}(h/2),

    and the two-point law on the end points with the same blanket mass and the same A-mass gives the upper
    end point :math:`c_k^{hi} = (a_k - c_k e^{u_k})/(e^{u_{k+1}} - e^{u_k}) =
    e^{-(\varepsilon_0+u_k)/2}\, 2\sinh^2(h/4)/\mathrm{expm1}(h)` (closed form, no cancellation; rounded up
    by a relative 1e-9, a first-order stochastic increase).  Because :math:`G = (A - e^\varepsilon B)` is
    affine in A on one side and in B on the other, this is a mean-preserving spread of G at every ε at
    once, so :math:`E(\sum \bar G_i)_+ \ge E(\sum G_i)_+` (convex order is closed under convolution:
    Shaked, Shanthikumar, "Stochastic Orders", Springer 2007, Theorem 3.A.12).  The ratios are bounded by
    :math:`E`, so nothing is truncated and nothing is charged.

    Parameters
    ----------
    eps0 : float
        Local ε0 in nats.
    cells : int
        Cells per side (uniform in the log-ratio u on [0, ε0]).

    Returns
    -------
    Decomposition
        ``2 * cells + 1`` components (ratios :math:`(e^{u_k}, 1)`, :math:`(1, e^{u_k})`), β = 1 − γ.
    """
    u = np.linspace(0.0, eps0, int(cells) + 1)
    u[-1] = eps0
    h = np.diff(u)
    base = np.exp(-(eps0 + u[:-1]) / 2)
    c = -0.5 * base * np.expm1(-h / 2)
    c_hi = np.minimum(base * 2.0 * np.sinh(h / 4) ** 2 / np.expm1(h) * (1 + _SPREAD_MARGIN), c)
    a, b, cc = ratio_spread_components(u, c - c_hi, c_hi, 0.5 * math.exp(-eps0))
    # not renormalised: the sums of a and b are 1 analytically (plus the upward rounding of the spread weights);
    # the probabilities c and β = 1 - γ are what the GPARV draws from
    return Decomposition._trusted(a, b, cc, max(0.0, -math.expm1(-eps0 / 2)),
                                  label=f"pair (0, 1) spread, {cells} cells")


@functools.lru_cache(maxsize=64)
def laplace_cells_lower(eps0: float, cells: int) -> Decomposition:
    r"""Theorem-14 decomposition of the Laplace dataset (0 | 1; others 1) with the reports quantised to cells.

    Every report y is mapped to the cell of its likelihood ratio :math:`v = \log(R_0(y)/R_1(y))`, clipped to
    :math:`[-\varepsilon_0, \varepsilon_0]` (``2 * cells`` equal cells on it, plus the two end values
    :math:`\pm\varepsilon_0` reached by y < 0 and y > 1): the same map for every user before shuffling, a
    post-processing of the shuffled reports, so the divergence of the quantised pair is a lower bound
    ([SCW] Theorem 14 for the finite randomizer ``P``).  In v, for y in [0, 1], :math:`R_1` has density
    :math:`\tfrac14 e^{-(\varepsilon_0+v)/2}` and :math:`R_0` density :math:`\tfrac14 e^{(v-\varepsilon_0)/2}`
    (derived here); y < 0 carries :math:`(R_0, R_1) = (\tfrac12, \tfrac12 e^{-\varepsilon_0})`, y > 1 the
    reverse.  Finer cells give a larger lower bound; as the cells shrink it tends to the continuous
    Theorem-14 value.

    Parameters
    ----------
    eps0 : float
        Local ε0 in nats.
    cells : int
        Half the number of cells on :math:`[-\varepsilon_0, \varepsilon_0]`.

    Returns
    -------
    Decomposition
        ``a = P[0]``, ``b = c = P[1]``, β = 0.
    """
    v = np.linspace(-eps0, eps0, 2 * int(cells) + 1)
    v[0], v[-1] = -eps0, eps0
    h = np.diff(v)
    p1 = -0.5 * np.exp(-(eps0 + v[:-1]) / 2) * np.expm1(-h / 2)
    p0 = 0.5 * np.exp((v[:-1] - eps0) / 2) * np.expm1(h / 2)
    tail = 0.5 * math.exp(-eps0)
    P0 = np.concatenate([[0.5], p0, [tail]])
    P1 = np.concatenate([[tail], p1, [0.5]])
    P0, P1 = P0 / math.fsum(P0), P1 / math.fsum(P1)
    return Decomposition(P0, P1, P1, 0.0, label=f"dataset (0 | 1; others 1), reports in {2 * cells + 2} cells")


@functools.lru_cache(maxsize=64)
def _laplace_families(eps0: float, cells: int, lower_cells: int) -> tuple:
    up = laplace_spread_decomposition(eps0, cells)
    lo = laplace_cells_lower(eps0, lower_cells)
    return tuple(dedupe([up, up.swapped()])), tuple(dedupe([lo, lo.swapped()]))


@dataclass(frozen=True)
class LaplaceFamily:
    """ε ↦ GPARV of the Laplace mechanism on {0, 1} (a :class:`~shuffleamp.decomposition.GparvFamily`).

    Parameters
    ----------
    eps0 : float
        Local ε0 in nats.
    kind : {"upper", "lower"}
        ``"upper"``: the blanket GPARV ([SCW] Theorem 13, :func:`laplace_upper_gparv`);
        ``"lower"``: the Theorem-14 GPARV (:func:`laplace_lower_gparv`).
    label : str
        Free text.
    """

    eps0: float
    kind: str = "upper"
    label: str = field(default="pair (0, 1)")

    def gparv(self, epsilon: float) -> Gparv:
        """The GPARV at central ε (nats).

        Parameters
        ----------
        epsilon : float
            Central ε in nats, >= 0.

        Returns
        -------
        Gparv
            The privacy-amplification random variable of the pair at ε ([SCW] Theorems 12-13).
        """
        if self.kind == "upper":
            return laplace_upper_gparv(self.eps0, epsilon)
        return laplace_lower_gparv(self.eps0, epsilon)

    def swapped(self) -> "LaplaceFamily":
        """``self``: Laplace on {0, 1} is input-symmetric, reversing the pair gives the same law.

        Returns
        -------
        LaplaceFamily
            The family with the roles of :math:`x_1^0` and :math:`x_1^1` exchanged (may be ``self``).
        """
        return self

    def law_key(self) -> Hashable:
        """``("laplace", eps0, kind)``: the law depends on nothing else.

        Returns
        -------
        hashable
            Equal keys mean equal GPARV laws at every ε.
        """
        return ("laplace", self.eps0, self.kind)


@dataclass(frozen=True)
class Laplace(_NoMatrix, Mechanism):
    r"""Laplace mechanism :math:`R(x) = x + \mathrm{Lap}(1/\varepsilon_0)` on :math:`\mathbb X = \{0, 1\}`
    ([SCW] Appendix B).

    :math:`\gamma = e^{-\varepsilon_0/2}`. The upper GPARV is the blanket GPARV for the pair
    (0, 1) (:func:`laplace_upper_gparv`; the mechanism is input-symmetric).
    There is no finite matrix form.

    **Lower-bound dataset** ([SCW] Theorem 14): :math:`x_1^0 = 0, x_1^1 = x_2 = \dots = x_n = 1`
    (:func:`laplace_lower_gparv`).

    Parameters
    ----------
    eps0 : float
        ε0 in nats, ``0 < eps0 <= 150`` (:data:`EPS0_MAX`) (noise scale ``1/eps0``, sensitivity 1).

    Raises
    ------
    ParameterError
        ``'eps0'`` invalid.
    """

    eps0: float
    name: ClassVar[str] = "laplace"
    param_specs: ClassVar[tuple[Parameter, ...]] = ()
    no_matrix: ClassVar[str] = "the Laplace mechanism has continuous outputs; no matrix form"

    def __post_init__(self):
        object.__setattr__(self, "eps0", _eps0(self.eps0))

    @property
    def gamma(self) -> float:
        r"""Blanket mass :math:`\gamma = \sum_y \inf_x R(x)(y)` (exact); see :attr:`Mechanism.gamma`."""
        return math.exp(-self.eps0 / 2)

    def decomposition(self, form: str = "simplified"):
        """The blanket GPARV family :class:`LaplaceFamily` (any ``form``).

        Parameters
        ----------
        form : {"simplified", "primary", "asymptotic"}
            Which form (see :meth:`Mechanism.decomposition`).

        Returns
        -------
        Decomposition or GparvFamily
            The decomposition (a GPARV family in ε).
        """
        _form(form)
        return LaplaceFamily(self.eps0, "upper")

    def upper_decompositions(self) -> list:
        """Decompositions whose GPARVs bound every neighbouring pair ([SCW] Theorem 13).

        Returns
        -------
        list of GparvFamily
            The upper bound is the maximum over these and their swapped versions.
        """
        return [LaplaceFamily(self.eps0, "upper")]

    def lower_decompositions(self) -> list:
        """Theorem-14 decompositions of the documented lower-bound datasets ([SCW] Theorem 14).

        Returns
        -------
        list of GparvFamily
            The lower bound is the maximum over the list.
        """
        return [LaplaceFamily(self.eps0, "lower", label="dataset (0 | 1; others 1)")]

    def decompositions_at(self, n: int) -> tuple:
        """Finite decompositions for one ε(δ) / δ(ε) query with n users (the exact evaluator's default).

        The upper family :func:`laplace_spread_decomposition` (a certified mean-preserving spread of the blanket
        GPARV, no charge) and the lower family :func:`laplace_cells_lower` (the Theorem-14 dataset with the
        reports quantised, a post-processing), each with its swap, on :func:`laplace_cells` cells per side
        (half as many for the lower family below :data:`LAPLACE_FINE_MIN_N` users): atomic laws, so the compiled
        ε search applies.  Cached per (ε0, cells).

        Parameters
        ----------
        n : int
            Number of users.

        Returns
        -------
        (tuple of Decomposition, tuple of Decomposition)
            Upper and lower families (swap-closed).
        """
        cells = laplace_cells(self.eps0, int(n))
        # below LAPLACE_FINE_MIN_N the lower search dominates the cost (nodes x atoms): half the cells there
        return _laplace_families(self.eps0, cells, cells if n >= LAPLACE_FINE_MIN_N else max(cells // 2, 8))

    def lower_cases(self) -> list:
        """Theorem-14 decompositions tagged with the dataset's shape; see :meth:`Mechanism.lower_cases`.

        Returns
        -------
        list of (tuple, GparvFamily)
            ``(pattern, family)`` pairs, one per entry of :meth:`lower_decompositions`.
        """
        return [(("type", "x2=x1"), f) for f in self.lower_decompositions()]

    def refuse_slow_epsilon(self, n: int) -> None:
        """Refuse up front an ε(δ) query of the exact evaluator that would take seconds (a cheap estimate from
        (ε0, n) alone, before any law is built; the band is :data:`LAPLACE_SLOW_BAND`).

        In that band the differing user is hidden among few blanket reports (:math:`n e^{-\\varepsilon_0/2}`
        expected) while the laws' ratios span :math:`e^{\\varepsilon_0}`: every Bromwich evaluation is large
        and the ε search needs many of them.  The answer there is close to ε0 (which always holds: pure
        ε0-LDP), and δ(ε) queries stay fast.

        Parameters
        ----------
        n : int
            Number of users.

        Raises
        ------
        ResourceLimitError
            Naming ``eps0`` (resource ``"time"``) inside the band.
        """
        e0 = self.eps0
        blanket = n * math.exp(-e0 / 2)
        if any(e0 >= e_min and n >= n_min and blanket <= b_max for e_min, n_min, b_max in LAPLACE_SLOW_BAND):
            raise ResourceLimitError(
                f"Laplace randomizer, eps0 = {e0:.6g}, n = {n}: about {blanket:.3g} blanket reports hide the "
                f"differing user while the likelihood ratios span e^{e0:.3g}; the exact epsilon(delta) search takes "
                "seconds there and amplifies little (epsilon <= eps0 holds for any n).  Lower eps0, or ask for "
                "delta at a given epsilon (fast here)", parameter="eps0", resource="time")

    @property
    def domain(self) -> int:
        """Input-domain size (``None`` = unknown / any); see :attr:`Mechanism.domain`."""
        return 2

    def variation_ratio_beta(self) -> tuple[float, str]:
        """[WPL24] Table 2, Laplace on [0, 1]: β = 1 − e^{−ε0/2}.

        Returns
        -------
        beta : float
            Total-variation parameter in [0, 1).
        source : str
            Where the value comes from.
        """
        return -math.expm1(-self.eps0 / 2), "Table 2 Laplace for [0,1]"

    def describe(self) -> dict:
        """JSON-serialisable description: ``{"mechanism": name, "eps0": ..., <parameters>}``.

        Returns
        -------
        dict
            Plain JSON-serialisable mapping (ε0 in nats).
        """
        return {"mechanism": self.name, "eps0": self.eps0}


# ---------------------------------------------------------------------------- arbitrary matrix
@dataclass(frozen=True, eq=False, init=False)
class MatrixMechanism(Mechanism):
    r"""Any finite randomizer given by its row-stochastic matrix ``P[x, y] = Pr[R(x) = y]``.

    :math:`\gamma = \sum_y \min_x P[x, y]`. Upper bound: the primary (blanket) decompositions
    ([SCW] Theorem 5) of **all** ordered input pairs :math:`x_0 \ne x_1`, de-duplicated: two pairs
    are duplicates when their decompositions have the same
    :func:`~shuffleamp.decomposition.law_key`, and a pair is dropped when it equals another
    pair's swap (the bounds code takes swaps into account). De-duplication is only an
    optimisation: a missed duplicate costs time, never soundness. The law keys of all ordered pairs
    are computed in vectorised batches (:func:`~shuffleamp.decomposition.law_keys`), after an
    up-front cost estimate that refuses too large matrices before anything is built; the upper
    decompositions are returned simplified (equal ratios merged: the same laws, fewer atoms). The
    evaluator reads them as a :class:`~shuffleamp.decomposition.PackedFamilies` (the merged components of
    all pairs in shared arrays; a decomposition object is built only for a family it evaluates).

    **Lower-bound datasets** (Theorem 14, :math:`x_2 = \dots = x_n`):

    * ``D <= 6`` inputs: every triple :math:`(x_0, x_1, x_2)` with :math:`x_0 \ne x_1`
      (:math:`x_2 = x_1` and :math:`x_2 = x_0` allowed), de-duplicated;
    * larger ``D`` (heuristic): for each de-duplicated upper pair, both orientations
      :math:`(x_0, x_1)` and :math:`(x_1, x_0)`, and every :math:`x_2 \ne x_0`, then the same
      orientations with :math:`x_2 = x_0`, de-duplicated, stopping after
      :data:`MATRIX_MAX_LOWER` (64) decompositions.

    Parameters
    ----------
    matrix : array_like, shape (D, Y)
        Row-stochastic, ``D >= 2`` inputs; rows must sum to 1 (relative tolerance 1e-9).
    eps0 : float or None, optional
        Claimed ε0 (nats). ``None`` (default): the tight value
        :math:`\max_{x,x',y} \ln(P[x,y]/P[x',y])`.

    Attributes
    ----------
    eps0 : float
        The claimed (or tight) ε0.
    eps0_tight : float
        The tight ε0 of the matrix.

    Raises
    ------
    ParameterError
        ``'matrix'`` if not a finite non-negative row-stochastic 2-D array; ``'eps0'`` invalid.
    NotLDPError
        If the matrix is not ε0-LDP for the given ε0 (parameter ``'eps0'``) or for any finite
        ε0 (parameter ``'matrix'``).
    """

    eps0: float
    eps0_tight: float
    name: ClassVar[str] = "matrix"
    param_specs: ClassVar[tuple[Parameter, ...]] = (
        Parameter("matrix", "matrix", doc="row-stochastic randomizer matrix, rows = inputs"),
        _with_default(EPS0, None))
    eps0_is_parameter: ClassVar[bool] = False

    def __init__(self, matrix, eps0=None):
        P = _validate.stochastic_matrix(matrix, "matrix")
        tight = _validate.ldp_level(P, "matrix")
        if eps0 is None:
            if tight <= 0:
                raise ParameterError("matrix", "all rows are identical (ε0 = 0); nothing to amplify")
            e0 = tight
        else:
            e0 = _validate.mechanism_eps0(eps0)
            _validate.check_ldp(P, e0, "matrix")
        _validate.mechanism_eps0(tight, "matrix", what="the matrix is")
        object.__setattr__(self, "_P", P)
        object.__setattr__(self, "eps0", float(e0))
        object.__setattr__(self, "eps0_tight", float(tight))

    def __repr__(self):
        D, Y = self._P.shape
        return f"MatrixMechanism(<{D}x{Y} matrix>, eps0={self.eps0!r})"

    @classmethod
    def from_params(cls, matrix, eps0=None) -> "MatrixMechanism":
        """Build from an array or the path of a CSV / whitespace-separated text file.

        Parameters
        ----------
        matrix : array_like of float, shape (d, m), or str or os.PathLike
            Row-stochastic matrix ``P[x, y]`` (rows are inputs), or the path of a file holding it.
        eps0 : float, optional
            Claimed local ε0 in nats; None means the matrix's tight ε0.

        Returns
        -------
        MatrixMechanism

        Raises
        ------
        ParameterError
            Naming ``matrix`` if the file cannot be read or the matrix is not row-stochastic.
        NotLDPError
            If the matrix is not ε0-LDP for any finite ε0, or not ``eps0``-LDP.
        """
        return cls(_load_matrix(matrix), eps0=eps0)

    def matrix(self) -> np.ndarray:
        """Row-stochastic matrix ``P[x, y] = Pr[R(x) = y]`` (rows are inputs); see :meth:`Mechanism.matrix`.

        Returns
        -------
        numpy.ndarray of float64, shape (inputs, outputs)
            Read-only, rows sum to 1.
        """
        return self._P

    @property
    def gamma(self) -> float:
        r"""Blanket mass :math:`\gamma = \sum_y \inf_x R(x)(y)` (exact); see :attr:`Mechanism.gamma`."""
        return float(self._P.min(axis=0).sum())

    @property
    def domain(self) -> int:
        """Input-domain size (``None`` = unknown / any); see :attr:`Mechanism.domain`."""
        return int(self._P.shape[0])

    def variation_ratio_beta(self) -> tuple[float, str]:
        """β = the largest pairwise total variation of the rows (exact), capped at tanh(ε0/2).

        Raises
        ------
        ResourceLimitError
            If ``D^2 * Y`` exceeds :data:`MATRIX_PAIR_BUDGET`.

        Returns
        -------
        beta : float
            Total-variation parameter in [0, 1).
        source : str
            Where the value comes from.
        """
        P = self._P
        D, Y = P.shape
        if D * D * Y > MATRIX_PAIR_BUDGET:
            raise ResourceLimitError(f"variation-ratio: pairwise total variation of a {D}x{Y} matrix "
                                     "exceeds the budget")
        tv = max(float(0.5 * np.abs(P[i] - P[i + 1:]).sum(axis=1).max()) for i in range(D - 1))
        return min(tv, math.tanh(self.eps0 / 2)), "max pairwise TV of the matrix rows"

    def lower_cases(self) -> list:
        """Theorem-14 decompositions tagged with the dataset's shape; see :meth:`Mechanism.lower_cases`.

        Returns
        -------
        list of (tuple, GparvFamily)
            ``(pattern, family)`` pairs, one per entry of :meth:`lower_decompositions`.
        """
        return [(("triple", t), f) for t, f in zip(self._lower_triples, self.lower_decompositions())]

    def decomposition(self, form: str = "simplified", *, x0: int = 0, x1: int = 1):
        """Blanket decomposition for the input pair ``(x0, x1)`` (default the representative pair (0, 1)).

        Parameters
        ----------
        form : {"simplified", "primary"}
            ``"asymptotic"`` is not defined for a fixed matrix.
        x0, x1 : int, optional
            Distinct row indices in ``[0, D)``.

        Raises
        ------
        ParameterError
            ``'form'`` unknown or ``"asymptotic"``; ``'x0'``/``'x1'`` out of range or equal.

        Returns
        -------
        Decomposition or GparvFamily
            The decomposition (a GPARV family in ε).
        """
        form = _form(form)
        if form == "asymptotic":
            raise ParameterError("form", "a matrix mechanism has no asymptotic form")
        D = self._P.shape[0]
        x0 = _validate.count(x0, "x0", minimum=0)
        x1 = _validate.count(x1, "x1", minimum=0)
        for nm, v in (("x0", x0), ("x1", x1)):
            if v >= D:
                raise ParameterError(nm, f"must be < {D} (number of inputs), got {v}")
        if x0 == x1:
            raise ParameterError("x1", "must differ from x0")
        dec = primary_decomposition(self._P, x0, x1)
        return dec if form == "primary" else dec.simplified()

    @functools.cached_property
    def _columns(self) -> tuple:
        """(P restricted to its non-zero columns, the blanket c = column minima there, merge keys of P/c).

        A zero column of an LDP matrix is zero in every row, so dropping it changes no law.
        """
        P = self._P
        cmin = P.min(axis=0)
        cols = cmin > 0
        Pc = np.ascontiguousarray(P[:, cols])
        c = cmin[cols]
        return Pc, c, ratio_keys(Pc, c[None, :], RATIO_RTOL)

    def _check_pair_cost(self) -> None:
        """Up-front refusal (before building anything) of the all-pairs decompositions and their screening."""
        D, Y = self._P.shape
        pairs = D * (D - 1)
        if pairs // 2 * Y > MATRIX_PAIR_BUDGET:
            raise ResourceLimitError(f"de-duplicating all {D * (D - 1) // 2} input pairs of a {D}x{Y} "
                                     f"matrix exceeds the budget of {MATRIX_PAIR_BUDGET} operations",
                                     parameter="matrix", resource="time")
        check_work(pairs * (MATRIX_PAIR_SECONDS + Y * MATRIX_ENTRY_SECONDS),
                   f"building and screening the blanket decompositions of all {D * (D - 1) // 2} input pairs "
                   f"of a {D}x{Y} matrix")

    @functools.cached_property
    def _pair_merge(self) -> tuple:
        """Merged primary decompositions of the unordered pairs ``x0 < x1`` and the law keys of both orientations.

        The pairs in the order of ``numpy.triu_indices(D, 1)`` (``x0`` ascending, then ``x1``); computed in
        batches of pairs: one :func:`~shuffleamp.decomposition.merge_rows` per batch (vectorised merge, no
        per-pair object) and its :func:`~shuffleamp.decomposition.law_keys`, and the same for the reversed
        pairs ``(x1, x0)`` (the swaps; only their keys are kept).  Returns
        ``(I, J, row, a, b, c, keys, swap_keys)``: pair ``p = (I[p], J[p])`` has merged components
        ``row == p`` of ``a, b, c``.
        """
        self._check_pair_cost()
        Pc, c, K = self._columns
        D, Y = Pc.shape
        beta = max(1.0 - float(c.sum()), 0.0)
        I_all, J_all = np.triu_indices(D, 1)
        chunk = max(1, MATRIX_BATCH_ENTRIES // max(1, Y))
        rows, As, Bs, Cs, keys, skeys = [], [], [], [], [], []
        for p0 in range(0, I_all.size, chunk):
            check_time(f"building the decompositions of a {D}x{self._P.shape[1]} matrix")
            I, J = I_all[p0:p0 + chunk], J_all[p0:p0 + chunk]
            C = np.broadcast_to(c, (I.size, Y))
            PI, PJ, KI, KJ = Pc[I], Pc[J], K[I], K[J]
            merged = merge_rows(PI, PJ, C, keys=(KI, KJ))
            keys += law_keys(PI, PJ, C, beta, merged=merged)
            # the reversed pairs (the swaps) merged on their own: a second compiled merge and plain keys are
            # cheaper than law_keys(swapped=True)'s lexsort of every component
            skeys += law_keys(PJ, PI, C, beta, merged=merge_rows(PJ, PI, C, keys=(KJ, KI)))
            rows.append(merged[0] + p0)
            As.append(merged[1])
            Bs.append(merged[2])
            Cs.append(merged[3])
        cat = (lambda xs: xs[0] if len(xs) == 1 else np.concatenate(xs))
        row, a, b, cc = (cat(x) if x else np.zeros(0) for x in (rows, As, Bs, Cs))
        for x in (a, b, cc):
            x.setflags(write=False)         # the decompositions of _merged share slices of these
        return I_all, J_all, row, a, b, cc, keys, skeys

    @functools.cached_property
    def _pair_keys(self) -> dict:
        """Law keys of the primary decompositions of all ordered pairs, as a dict (x0, x1) -> key
        (from :attr:`_pair_merge`: both orientations of each unordered pair)."""
        I, J, _, _, _, _, keys, skeys = self._pair_merge
        il, jl = I.tolist(), J.tolist()
        out = dict(zip(zip(il, jl), keys))
        out.update(zip(zip(jl, il), skeys))
        return out

    @functools.cached_property
    def _upper_index(self) -> tuple:
        """Indices (into :attr:`_pair_merge`'s pairs) of the de-duplicated upper pairs."""
        _, _, _, _, _, _, keys, skeys = self._pair_merge
        out, seen = [], set()
        for p, (k, sk) in enumerate(zip(keys, skeys)):
            if k in seen:
                continue
            # the ordered pair (x1, x0) is this pair's swap: always dropped
            seen.add(k)
            seen.add(sk)
            out.append(p)
        return tuple(out)

    @functools.cached_property
    def _upper_pairs(self) -> tuple:
        I, J = self._pair_merge[:2]
        il, jl = I.tolist(), J.tolist()
        return tuple((il[p], jl[p]) for p in self._upper_index)

    def _lower_packed(self) -> PackedFamilies:
        """:meth:`lower_decompositions` as a :class:`~shuffleamp.decomposition.PackedFamilies`: the simplified
        decompositions of the Theorem-14 triples, merged in one batch (built on access)."""
        Pc = self._columns[0]
        T = np.array(self._lower_triples, dtype=np.int64).reshape(-1, 3)
        x0s, x1s, x2s = T[:, 0], T[:, 1], T[:, 2]
        C = Pc[x2s]
        beta = 0.0
        merged = merge_rows(Pc[x0s], Pc[x1s], C)
        row, a, b, cc = merged[:4]
        a, b, cc = np.array(a), np.array(b), np.array(cc)     # own copies: nothing else can write them
        for x in (a, b, cc):
            x.setflags(write=False)         # the decompositions share slices of these
        m = x0s.size
        # both orientations from the one merge (the swap exchanges a and b)
        ka = law_keys(Pc[x0s], Pc[x1s], C, beta, merged=merged)
        kb = law_keys(Pc[x0s], Pc[x1s], C, beta, swapped=True, merged=merged)
        bnd = np.searchsorted(row, np.arange(m + 1)).tolist()
        labels = [f"dataset ({x0}|{x1}; others {x2})" for x0, x1, x2 in T.tolist()]
        return PackedFamilies(a, b, cc, bnd[:-1], bnd[1:], beta, labels, ka, kb)

    def _upper_packed(self) -> PackedFamilies:
        """:meth:`upper_decompositions` as a :class:`~shuffleamp.decomposition.PackedFamilies` (the same
        decompositions, built on access; the packed arrays are slices of :attr:`_pair_merge`)."""
        I, J, row, a, b, cc, keys, skeys = self._pair_merge
        idx = self._upper_index
        beta = max(1.0 - float(self._columns[1].sum()), 0.0)
        bnd = np.searchsorted(row, np.arange(I.size + 1)).tolist()
        il, jl = I.tolist(), J.tolist()
        return PackedFamilies(a, b, cc, [bnd[p] for p in idx], [bnd[p + 1] for p in idx], beta,
                              [f"pair ({il[p]}, {jl[p]})" for p in idx], [keys[p] for p in idx],
                              [skeys[p] for p in idx])

    def upper_decompositions(self) -> list:
        """Decompositions whose GPARVs bound every neighbouring pair ([SCW] Theorem 13).

        The blanket decompositions of the de-duplicated pairs, simplified (components with equal
        ratios merged: the same GPARV law, fewer atoms).

        Returns
        -------
        list of GparvFamily
            The upper bound is the maximum over these and their swapped versions.
        """
        return list(self._upper_packed())

    @functools.cached_property
    def _lower_triples(self) -> tuple:
        Pc = self._columns[0]
        D = Pc.shape[0]
        if D <= MATRIX_ALL_TRIPLES_MAX_D:
            cands = [(x0, x1, x2) for x0 in range(D) for x1 in range(D) if x1 != x0 for x2 in range(D)]
            cap = None
        else:
            oriented = [o for x0, x1 in self._upper_pairs for o in ((x0, x1), (x1, x0))]
            cands = itertools.chain(((o0, o1, x2) for o0, o1 in oriented for x2 in range(D) if x2 != o0),
                                    ((o0, o1, o0) for o0, o1 in oriented))
            cap = MATRIX_MAX_LOWER
        cands = iter(cands)
        triples, seen = [], set()
        while cap is None or len(triples) < cap:
            check_time(f"building the lower-bound datasets of a {D}-input matrix")
            # (a batch of about the number still needed: with few duplicates, one batch)
            batch = list(itertools.islice(cands, 256 if cap is None else max(16, cap - len(triples) + 8)))
            if not batch:
                break
            T = np.array(batch, dtype=np.int64)
            ks = law_keys(Pc[T[:, 0]], Pc[T[:, 1]], Pc[T[:, 2]], 0.0)
            for t, k in zip(batch, ks):
                if k in seen:
                    continue
                seen.add(k)
                triples.append(t)
                if cap is not None and len(triples) >= cap:
                    break
        return tuple(triples)

    def lower_decompositions(self) -> list:
        """Theorem-14 decompositions of the documented lower-bound datasets ([SCW] Theorem 14).

        Returns
        -------
        list of GparvFamily
            The lower bound is the maximum over the list (simplified decompositions).
        """
        if not self._lower_triples:
            return []
        return list(self._lower_packed())

    def describe(self) -> dict:
        """JSON-serialisable description: ``{"mechanism": name, "eps0": ..., <parameters>}``.

        Returns
        -------
        dict
            Plain JSON-serialisable mapping (ε0 in nats).
        """
        P = self._P
        out = {"mechanism": self.name, "eps0": self.eps0, "eps0_tight": self.eps0_tight,
               "shape": [int(P.shape[0]), int(P.shape[1])],
               "sha256": hashlib.sha256(np.ascontiguousarray(P).tobytes()).hexdigest()}
        if P.size <= 4096:
            out["matrix"] = P.tolist()
        return out


# ---------------------------------------------------------------------------- registry
def _load_matrix(value):
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise ParameterError("matrix", f"cannot read matrix file {path!r}: {exc}") from exc
        except UnicodeDecodeError as exc:
            raise ParameterError("matrix", f"{path!r} is not UTF-8 text (expected a numeric CSV matrix): "
                                           f"{exc.reason} at byte {exc.start}") from exc
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        try:
            rows = [[float(tok) for tok in (ln.split(",") if "," in ln else ln.split())] for ln in lines]
        except ValueError as exc:
            raise ParameterError("matrix", f"{path!r} is not a numeric CSV matrix: {exc}") from exc
        if not rows or len({len(r) for r in rows}) != 1:
            raise ParameterError("matrix", f"{path!r}: rows must be non-empty and of equal length")
        return np.array(rows, dtype=np.float64)
    return value


_PLUGINS_LOCK = threading.Lock()
_plugins_loaded = False


def registry() -> dict[str, type]:
    """Every mechanism class by name: the built-in ones and those of installed plugins.

    A package registers mechanism classes through the entry-point group ``shuffleamp.mechanisms``
    (:data:`ENTRY_POINT_GROUP`), e.g. in its ``pyproject.toml``::

        [project.entry-points."shuffleamp.mechanisms"]
        ksubset = "shuffleamp_ksubset:KSubset"

    The entry points are loaded once, on the first call (thread-safe). A plugin that fails to load,
    is not a :class:`Mechanism` subclass, or reuses a name already registered is skipped with a
    :class:`RuntimeWarning` naming it; it never breaks the other mechanisms.

    Returns
    -------
    dict
        :data:`MECHANISMS` (name -> class), built-in mechanisms first.
    """
    global _plugins_loaded
    if _plugins_loaded:
        return MECHANISMS
    with _PLUGINS_LOCK:
        if _plugins_loaded:
            return MECHANISMS
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            where = f"mechanism plugin {ep.name!r} ({ep.value})"
            known = MECHANISMS.get(ep.name)
            try:
                obj = ep.load()
            except Exception as exc:  # noqa: BLE001 - a broken plugin must not break the library
                warnings.warn(f"shuffleamp: {where} failed to load: {type(exc).__name__}: {exc}", RuntimeWarning,
                              stacklevel=2)
                continue
            if not (isinstance(obj, type) and issubclass(obj, Mechanism)):
                warnings.warn(f"shuffleamp: {where} is not a shuffleamp.mechanisms.Mechanism subclass; skipped",
                              RuntimeWarning, stacklevel=2)
                continue
            if known is not None and known is not obj:
                warnings.warn(f"shuffleamp: {where} reuses the name of {known.__module__}.{known.__qualname__}; "
                              "skipped", RuntimeWarning, stacklevel=2)
                continue
            if obj.name != ep.name:
                warnings.warn(f"shuffleamp: {where}: the entry point name differs from the class's name "
                              f"{obj.name!r}; skipped", RuntimeWarning, stacklevel=2)
                continue
            MECHANISMS[ep.name] = obj
        _plugins_loaded = True
    return MECHANISMS


def make(name: str, **params) -> Mechanism:
    """Build a mechanism from its registry name and keyword parameters.

    The parameters are checked against the class's declaration (``param_specs``): an unknown
    name, a missing required parameter (never silently defaulted) or a value outside the declared
    range is an error naming the parameter; the class then checks the rest.

    Parameters
    ----------
    name : str
        A key of :func:`registry`: ``"krr"`` (params ``eps0``, ``k``), ``"blh"``, ``"rappor"``, ``"oue"``
        (``eps0``, optional ``d``, default ``None`` = asymptotic), ``"hr"`` (``eps0``, ``d``),
        ``"laplace"`` (``eps0``), ``"matrix"`` (``matrix`` = array or path of a CSV /
        whitespace-separated text file, optional ``eps0``), or a plugin's name. Case-insensitive.
    **params
        The mechanism's parameters (ε0 in nats).

    Returns
    -------
    Mechanism

    Raises
    ------
    ParameterError
        ``'mechanism'`` for an unknown name; the parameter's name for a missing, unknown or
        invalid parameter.
    NotLDPError
        For a matrix that is not ε0-LDP.
    """
    reg = registry()
    if not isinstance(name, str) or name.strip().lower() not in reg:
        raise ParameterError("mechanism", f"unknown mechanism {name!r}; expected one of {sorted(reg)}")
    cls = reg[name.strip().lower()]
    specs = {p.name: p for p in cls.param_specs}
    for key in params:
        if key not in specs:
            raise ParameterError(key, f"unknown parameter for mechanism {name!r} (accepted: {sorted(specs)})")
    for p in cls.param_specs:
        if p.required and p.name not in params:
            raise p.missing(name)
    values = {p.name: p.check(params[p.name]) if p.name in params else p.default
              for p in cls.param_specs}
    return cls.from_params(**values)
