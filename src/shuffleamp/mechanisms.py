r"""Local randomizers and their optimal (blanket) decompositions.

Every mechanism knows

* its row-stochastic matrix form ``P[x, y] = Pr[R(x) = y]`` (finite mechanisms of
  moderate size only),
* its blanket mass :math:`\gamma = \sum_y \min_x P[x, y]` in closed form,
* its optimal general-clone decomposition for the worst-case (equivalently, by input
  symmetry, any) neighbouring pair, with **exact finite-domain** coefficients
  (seed000 digest §2.5, §2.7, §6, Table 2),
* the decompositions whose GPARVs give the **upper** bound (Theorem 13; the bound is the
  maximum over the list and the swapped versions of its entries), and
* the Theorem-14 decompositions (dataset :math:`x_2 = \dots = x_n`) whose GPARVs give
  **lower** bounds (seed000 digest §5; the bound is the maximum over the list).

Notation: :math:`E = e^{\varepsilon_0}` with :math:`\varepsilon_0` in nats,
:math:`t = e^{\varepsilon_0/2}`, :math:`e = e^{\varepsilon}`.

The five-component form (digest §6.1) used by every extreme-property mechanism is
:meth:`shuffleamp.gparv.Decomposition.from_pqr`: components with ratio
:math:`(E,1), (1,E), (E,E), (1,1)` and blanket masses :math:`p, p, q, r`.
"""

from __future__ import annotations

import abc
import functools
import hashlib
import math
import os
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from . import _validate
from .errors import ParameterError, ResourceLimitError
from .gparv import (Decomposition, LaplaceFamily, lower_decomposition,
                    primary_decomposition)

__all__ = [
    "Mechanism", "KRR", "BLH", "RAPPOR", "OUE", "HadamardResponse", "Laplace",
    "MatrixMechanism", "MECHANISMS", "make",
    "MAX_MATRIX_ENTRIES", "MAX_BIT_DOMAIN", "EPS0_MAX",
]

#: Largest matrix (inputs x outputs entries) :meth:`Mechanism.matrix` will build.
MAX_MATRIX_ENTRIES = 2 ** 22
#: Largest domain size for which the BLH / RAPPOR / OUE matrix (2^d or 2^(d+1) outputs) is built.
MAX_BIT_DOMAIN = 12
#: Largest ε0 (nats) accepted by the parametric mechanisms; e^{ε0} must stay finite in float64.
EPS0_MAX = 700.0
#: HR lower decompositions are computed from matrix rows up to this Hadamard order, closed form above.
HR_LOWER_FROM_MATRIX_MAX_D = 1024
#: Tolerance used to compare decompositions when de-duplicating input pairs / datasets.
DEDUP_TOL = 1e-12
#: MatrixMechanism: all triples (x0, x1, x2) are used as lower-bound datasets up to this many inputs.
MATRIX_ALL_TRIPLES_MAX_D = 6
#: MatrixMechanism: cap on the number of heuristic lower-bound datasets for larger domains.
MATRIX_MAX_LOWER = 64
#: MatrixMechanism: budget (pairs x outputs) for the all-pairs de-duplication of upper decompositions.
MATRIX_PAIR_BUDGET = 2 ** 28

_FORMS = ("simplified", "primary", "asymptotic")


# ---------------------------------------------------------------------------- helpers
def _eps0(value) -> float:
    v = _validate.eps0(value)
    if not isinstance(v, float):
        raise ParameterError("eps0", "must be a scalar")
    if v > EPS0_MAX:
        raise ParameterError("eps0", f"must be <= {EPS0_MAX} nats (e^eps0 overflows), got {v!r}")
    return v


def _form(form) -> str:
    return _validate.choice(form, "form", set(_FORMS))


def _popcount(x: np.ndarray) -> np.ndarray:
    """Bit count of non-negative int64 entries (works on numpy < 2 as well)."""
    x = np.asarray(x, dtype=np.int64)
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


def _decomp_key(a, b, c, tol: float = DEDUP_TOL) -> tuple:
    """Canonical multiset of (a_j, b_j, c_j) triples, rounded to ``tol``."""
    trip = np.round(np.stack([a, b, c], axis=1) / tol).astype(np.int64)
    keep = trip.any(axis=1)
    trip = trip[keep]
    order = np.lexsort(trip.T[::-1])
    return tuple(map(tuple, trip[order]))


def _key_of(dec: Decomposition, swap: bool = False) -> tuple:
    s = dec.simplified()
    return _decomp_key(s.b, s.a, s.c) if swap else _decomp_key(s.a, s.b, s.c)


def _check_entries(n_entries: int, param: str, what: str):
    if n_entries > MAX_MATRIX_ENTRIES:
        raise ParameterError(param, f"the matrix form of {what} would have {n_entries} entries "
                                    f"(> {MAX_MATRIX_ENTRIES}); use the closed-form decompositions")


def _bit_lower(E: float, pi0: float, pi1: float, pi2: float, same: bool, label: str) -> Decomposition:
    r"""Theorem-14 decomposition of a 'bit-indicator' mechanism (digest §5).

    ``R(x)(y) ∝ E^{u_x(y)}`` with one bit :math:`u_x(y)` per input; under
    :math:`y \sim R(x_2)` the bits :math:`u_0, u_1, u_2` (at :math:`x_1^0, x_1^1, x_2`) are independent
    Bernoulli(``pi0``, ``pi1``, ``pi2``), and :math:`R(x_j)(y)/R(x_2)(y) = E^{u_j - u_2}`.
    With ``same=True`` the dataset is :math:`x_2 = x_1^1` (so :math:`u_1 \equiv u_2`; ``pi1`` unused).
    """
    a, b, c = [], [], []
    for u0 in (0, 1):
        for u2 in (0, 1):
            for u1 in ((u2,) if same else (0, 1)):
                pr = ((pi0 if u0 else 1 - pi0) * (pi2 if u2 else 1 - pi2)
                      * (1.0 if same else (pi1 if u1 else 1 - pi1)))
                c.append(pr)
                a.append(pr * E ** (u0 - u2))
                b.append(pr * E ** (u1 - u2))
    return Decomposition(np.array(a), np.array(b), np.array(c), 0.0, label=label).simplified()


def _lower_dedup(decs) -> list:
    out, seen = [], set()
    for d in decs:
        k = _key_of(d)
        if k not in seen:
            seen.add(k)
            out.append(d)
    return out


# ---------------------------------------------------------------------------- base class
class Mechanism(abc.ABC):
    r"""Abstract local randomizer :math:`R: \mathbb X \to \mathbb Y` satisfying pure :math:`\varepsilon_0`-LDP.

    Concrete mechanisms are frozen dataclasses that validate their parameters on
    construction (through :mod:`shuffleamp._validate`) and raise
    :class:`~shuffleamp.errors.ParameterError` naming the offending field.

    Attributes
    ----------
    name : str
        Registry name (class variable): ``"krr"``, ``"blh"``, ``"rappor"``, ``"oue"``,
        ``"hr"``, ``"laplace"`` or ``"matrix"``.
    eps0 : float
        The local privacy level ε0 > 0 (nats) the randomizer satisfies.
    """

    name: ClassVar[str] = ""
    eps0: float

    @abc.abstractmethod
    def matrix(self) -> np.ndarray:
        """Row-stochastic matrix ``P[x, y] = Pr[R(x) = y]`` (rows are inputs), float64, read-only.

        Raises
        ------
        ParameterError
            If the matrix would exceed :data:`MAX_MATRIX_ENTRIES` entries (parameter ``'d'``,
            or ``'k'`` for k-RR), the domain is infinite (``d=None``), or the mechanism has
            continuous outputs (Laplace; parameter ``'mechanism'``).
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
            coefficients, digest Table 2). ``"primary"``: one component per output, built
            from :meth:`matrix` (Theorem 5). ``"asymptotic"``: the large-domain limit
            (digest Table 3); a limit only, **not** a bound for finite domains.

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
        """

    @abc.abstractmethod
    def lower_decompositions(self) -> list:
        """Theorem-14 decompositions ``Decomposition(a=R(x0), b=R(x1), c=R(x2), beta=0)``.

        Merged by ratio, one per documented dataset :math:`x_2 = \\dots = x_n` (see the class
        docstring); the lower bound is the maximum over the list.
        """

    @abc.abstractmethod
    def describe(self) -> dict:
        """JSON-serialisable description: ``{"mechanism": name, "eps0": ..., <parameters>}``."""

    # convenience shared by finite mechanisms
    def _primary(self, x0: int, x1: int) -> Decomposition:
        return primary_decomposition(self.matrix(), x0, x1)


# ---------------------------------------------------------------------------- extreme-property base
class _PQRMechanism(Mechanism):
    """Extreme-property mechanism described by the (p, q, r) of digest §6.1."""

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
    r"""k-ary randomized response on :math:`[k]` (seed000 digest §2.7 Example 4.1, Table 2).

    :math:`\Pr[y = x] = E/(E+k-1)`, :math:`\Pr[y = y'] = 1/(E+k-1)` for each :math:`y' \ne x`.
    Simplified optimal decomposition: :math:`p = 1/(E+k-1)`, :math:`q = 0`, :math:`r = (k-2)p`;
    :math:`\gamma = k/(E+k-1)`. The mechanism is input-symmetric, so one pair suffices.
    There is no domain limit: ``form="asymptotic"`` returns the exact form.

    **Lower-bound dataset** (digest §5): for :math:`k \ge 3`, :math:`x_1^0 = 0`,
    :math:`x_1^1 = 1`, :math:`x_2 = \dots = x_n = 2` (mutually distinct), giving the 4-atom
    GPARV :math:`E-e` (mass :math:`p`), :math:`1-Ee` (:math:`p`), :math:`(1-e)/E` (:math:`Ep`),
    :math:`1-e` (:math:`(k-3)p`). For :math:`k = 2`: :math:`x_2 = \dots = x_n = x_1^1`, giving
    :math:`E-e` w.p. :math:`1/(E+1)` and :math:`1/E-e` w.p. :math:`E/(E+1)`.

    Parameters
    ----------
    eps0 : float
        ε0 in nats, ``0 < eps0 <= 700``.
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

    def __post_init__(self):
        object.__setattr__(self, "eps0", _eps0(self.eps0))
        object.__setattr__(self, "k", _validate.count(self.k, "k", minimum=2))

    def _pqr(self, asymptotic: bool):
        E = math.exp(self.eps0)
        p = 1.0 / (E + self.k - 1)
        return p, 0.0, (self.k - 2) * p

    @property
    def gamma(self) -> float:
        return self.k / (math.exp(self.eps0) + self.k - 1)

    def _check_matrix_size(self):
        _check_entries(self.k * self.k, "k", f"{self.k}-RR")

    def _build_matrix(self):
        E = math.exp(self.eps0)
        P = np.full((self.k, self.k), 1.0 / (E + self.k - 1))
        np.fill_diagonal(P, E / (E + self.k - 1))
        return P

    def lower_decompositions(self) -> list:
        E = math.exp(self.eps0)
        k = self.k
        if k == 2:
            c = np.array([1 / (E + 1), E / (E + 1)])
            a = np.array([E / (E + 1), 1 / (E + 1)])
            b = c.copy()
            lab = "dataset (0 | 1; others 1)"
        else:
            p = 1.0 / (E + k - 1)
            # outputs x_1^0, x_1^1, x_2, rest
            c = np.array([p, p, E * p, (k - 3) * p])
            a = np.array([E * p, p, p, (k - 3) * p])
            b = np.array([p, E * p, p, (k - 3) * p])
            lab = "dataset (0 | 1; others 2)"
        return [Decomposition(a, b, c, 0.0, label=lab).simplified()]

    def describe(self) -> dict:
        return {"mechanism": self.name, "eps0": self.eps0, "k": self.k}


# ---------------------------------------------------------------------------- bit mechanisms
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

    # bit-indicator lower bound (digest §5): R(x)(y) ∝ E^{u_x(y)}
    @abc.abstractmethod
    def _bit_laws(self) -> tuple[float, float]:
        """(Pr[u_x = 1] for x ≠ x_2, Pr[u_{x_2} = 1]) under y ~ R(x_2)."""

    def lower_decompositions(self) -> list:
        E = math.exp(self.eps0)
        pi_other, pi_self = self._bit_laws()
        if self.d == 2:
            return [_bit_lower(E, pi_other, pi_other, pi_self, True, "dataset (0 | 1; others 1)")]
        return [_bit_lower(E, pi_other, pi_other, pi_self, False, "dataset (0 | 1; others 2)")]

    def describe(self) -> dict:
        return {"mechanism": self.name, "eps0": self.eps0, "d": self.d}


@dataclass(frozen=True)
class BLH(_BitMechanism):
    r"""Binary local hashing (seed000 digest §6.5 A.1, Tables 2 and 3).

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

    **Lower-bound dataset** (digest §5, bit-indicator form): for ``d >= 3`` or ``d=None``,
    :math:`x_1^0 = 0, x_1^1 = 1, x_2 = \dots = x_n = 2` (mutually distinct; the GPARV is the same
    for every ``d >= 3``); for ``d = 2``, :math:`x_2 = \dots = x_n = x_1^1 = 1`. The GPARV is
    :math:`(E^{u_0} - e E^{u_1})/E^{u_2}` with independent bits :math:`u_j` at
    :math:`x_1^0, x_1^1, x_2` under :math:`y \sim R(x_2)`
    (BLH: :math:`u_0, u_1 \sim` Bern(1/2),
    :math:`u_2 \sim` Bern(E/(1+E)), :math:`u_j = [h(x_j) = y]`).

    Parameters
    ----------
    eps0 : float
        ε0 in nats, ``0 < eps0 <= 700``.
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
        return 0.5, E / (1 + E)


@dataclass(frozen=True)
class RAPPOR(_BitMechanism):
    r"""Basic one-time RAPPOR / symmetric unary encoding (seed000 digest §6.5 A.2, Tables 2 and 3).

    Unary encoding of :math:`x \in [d]`, each bit through binary randomized response at
    :math:`\varepsilon_0/2` (keep w.p. :math:`t/(1+t)`, :math:`t = e^{\varepsilon_0/2}`):
    :math:`\Pr[y \mid x] = t^{d - d_H(e_x, y)}/(1+t)^d`. Matrix over :math:`y \in \{0,1\}^d`
    (column index with bit ``i`` = ``y[i]``), built for ``d <= 12`` only.

    Exact coefficients (Table 2): :math:`p = 1/(t+1)^2`,
    :math:`q = t^{-1}/(t+1)^2 - t^{-1}/(t+1)^d`, :math:`r = t/(t+1)^2 + t/(t+1)^d`,
    :math:`\gamma = e^{-\varepsilon_0/2} + (t - 1/t)/(1+t)^d`. ``d=None``: the limit
    (Table 3, :math:`q = 1/(t(t+1)^2)`, :math:`r = t/(t+1)^2`, :math:`\gamma = 1/t`).

    **Lower-bound dataset** (digest §5, bit-indicator form): for ``d >= 3`` or ``d=None``,
    :math:`x_1^0 = 0, x_1^1 = 1, x_2 = \dots = x_n = 2` (mutually distinct; the GPARV is the same
    for every ``d >= 3``); for ``d = 2``, :math:`x_2 = \dots = x_n = x_1^1 = 1`. The GPARV is
    :math:`(E^{u_0} - e E^{u_1})/E^{u_2}` with independent bits :math:`u_j` at
    :math:`x_1^0, x_1^1, x_2` under :math:`y \sim R(x_2)`
    (RAPPOR: :math:`u_0, u_1 \sim` Bern(1/(1+t)),
    :math:`u_2 \sim` Bern(t/(1+t)), :math:`u_j = y[x_j]`).

    Parameters
    ----------
    eps0 : float
        ε0 in nats, ``0 < eps0 <= 700`` (the whole report is ε0-LDP).
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
        return 1 / (1 + t), t / (1 + t)


@dataclass(frozen=True)
class OUE(_BitMechanism):
    r"""Optimized unary encoding (seed000 digest §6.5 A.3, Tables 2 and 3).

    Unary encoding of :math:`x \in [d]`; the 1-bit is replaced by a fair coin, each 0-bit is
    reported as 1 w.p. :math:`1/(1+E)`:
    :math:`\Pr[y \mid x] = E^{d-1-(|y| - y[x])}/(2(1+E)^{d-1})`. Matrix over
    :math:`\{0,1\}^d`, built for ``d <= 12`` only.

    Exact coefficients (Table 2): :math:`p = 1/(2(E+1))`,
    :math:`q = E^{-1}/(2(E+1)) - E^{-1}/(2(E+1)^{d-1})`,
    :math:`r = E/(2(E+1)) + 1/(2(E+1)^{d-1})`,
    :math:`\gamma = (1+E)/(2E) + (1 - 1/E)/(2(1+E)^{d-1})`. ``d=None``: the limit
    (Table 3, :math:`q = 1/(2E(E+1))`, :math:`r = E/(2(E+1))`, :math:`\gamma = (1+E)/(2E)`).

    **Lower-bound dataset** (digest §5, bit-indicator form): for ``d >= 3`` or ``d=None``,
    :math:`x_1^0 = 0, x_1^1 = 1, x_2 = \dots = x_n = 2` (mutually distinct; the GPARV is the same
    for every ``d >= 3``); for ``d = 2``, :math:`x_2 = \dots = x_n = x_1^1 = 1`. The GPARV is
    :math:`(E^{u_0} - e E^{u_1})/E^{u_2}` with independent bits :math:`u_j` at
    :math:`x_1^0, x_1^1, x_2` under :math:`y \sim R(x_2)`
    (OUE: :math:`u_0, u_1 \sim` Bern(1/(1+E)),
    :math:`u_2 \sim` Bern(1/2), :math:`u_j = y[x_j]`).

    Parameters
    ----------
    eps0 : float
        ε0 in nats, ``0 < eps0 <= 700``.
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
        return 1 / (1 + E), 0.5


# ---------------------------------------------------------------------------- Hadamard response
@dataclass(frozen=True)
class HadamardResponse(_PQRMechanism):
    r"""Hadamard response (seed000 digest §6.5 A.4 with the "(my check, errata)" corrections, §11 item 4).

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
        ε0 in nats, ``0 < eps0 <= 700``.
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
        c = np.array([hi, hi, lo, lo])
        a = np.array([hi, hi / E, lo * E, lo])
        b = np.array([hi, hi / E, lo, lo * E])
        out = [Decomposition(a, b, c, 0.0, label="dataset (1 | 2; others 3 = 1 xor 2)").simplified()]
        if self.d >= 8:
            out.append(_bit_lower(E, 0.5, 0.5, E / (1 + E), False,
                                  "dataset (1 | 2; others 4, independent)"))
        return out

    def lower_decompositions(self) -> list:
        if self.d > HR_LOWER_FROM_MATRIX_MAX_D:
            return self._lower_closed_form()
        x2s = [3] + ([4] if self.d >= 8 else [])
        rows = self._rows([1, 2] + x2s)
        rows = rows / rows.sum(axis=1, keepdims=True)
        out = []
        for i, x2 in enumerate(x2s):
            lab = "dataset (1 | 2; others 3 = 1 xor 2)" if x2 == 3 else "dataset (1 | 2; others 4, independent)"
            out.append(Decomposition(rows[0], rows[1], rows[2 + i], 0.0, label=lab).simplified())
        return out

    def describe(self) -> dict:
        return {"mechanism": self.name, "eps0": self.eps0, "d": self.d}


# ---------------------------------------------------------------------------- Laplace
@dataclass(frozen=True)
class Laplace(Mechanism):
    r"""Laplace mechanism :math:`R(x) = x + \mathrm{Lap}(1/\varepsilon_0)` on :math:`\mathbb X = \{0, 1\}`
    (seed000 digest §6.6, [L] Appendix B).

    :math:`\gamma = e^{-\varepsilon_0/2}`. The upper GPARV is the blanket GPARV for the pair
    (0, 1) (:func:`shuffleamp.gparv.laplace_upper_gparv`; the mechanism is input-symmetric).
    There is no finite matrix form.

    **Lower-bound dataset** ([L] §5.3): :math:`x_1^0 = 0, x_1^1 = x_2 = \dots = x_n = 1`
    (:func:`shuffleamp.gparv.laplace_lower_gparv`).

    Parameters
    ----------
    eps0 : float
        ε0 in nats, ``0 < eps0 <= 700`` (noise scale ``1/eps0``, sensitivity 1).

    Raises
    ------
    ParameterError
        ``'eps0'`` invalid.
    """

    eps0: float
    name: ClassVar[str] = "laplace"

    def __post_init__(self):
        object.__setattr__(self, "eps0", _eps0(self.eps0))

    def matrix(self) -> np.ndarray:
        raise ParameterError("mechanism", "the Laplace mechanism has continuous outputs; no matrix form")

    @property
    def gamma(self) -> float:
        return math.exp(-self.eps0 / 2)

    def decomposition(self, form: str = "simplified"):
        """The blanket GPARV family :class:`~shuffleamp.gparv.LaplaceFamily` (any ``form``)."""
        _form(form)
        return LaplaceFamily(self.eps0, "upper")

    def upper_decompositions(self) -> list:
        return [LaplaceFamily(self.eps0, "upper")]

    def lower_decompositions(self) -> list:
        return [LaplaceFamily(self.eps0, "lower", label="dataset (0 | 1; others 1)")]

    def describe(self) -> dict:
        return {"mechanism": self.name, "eps0": self.eps0}


# ---------------------------------------------------------------------------- arbitrary matrix
@dataclass(frozen=True, eq=False, init=False)
class MatrixMechanism(Mechanism):
    r"""Any finite randomizer given by its row-stochastic matrix ``P[x, y] = Pr[R(x) = y]``.

    :math:`\gamma = \sum_y \min_x P[x, y]`. Upper bound: the primary (blanket) decompositions
    (Theorem 5) of **all** ordered input pairs :math:`x_0 \ne x_1`, de-duplicated: two pairs
    are duplicates when their simplified decompositions have the same multiset of
    :math:`(a_j, b_j, c_j)` up to :data:`DEDUP_TOL`, and a pair is dropped when it equals another
    pair's swap (the bounds code takes swaps into account). De-duplication is only an
    optimisation: a missed duplicate costs time, never soundness.

    **Lower-bound datasets** (Theorem 14, :math:`x_2 = \dots = x_n`):

    * ``D <= 6`` inputs: every triple :math:`(x_0, x_1, x_2)` with :math:`x_0 \ne x_1` and
      :math:`x_2 \ne x_0` (:math:`x_2 = x_1` allowed), de-duplicated;
    * larger ``D`` (heuristic): for each de-duplicated upper pair, both orientations
      :math:`(x_0, x_1)` and :math:`(x_1, x_0)`, and every :math:`x_2 \ne x_0`, de-duplicated,
      stopping after :data:`MATRIX_MAX_LOWER` (64) decompositions.

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

    def __init__(self, matrix, eps0=None):
        P = _validate.stochastic_matrix(matrix, "matrix")
        tight = _validate.ldp_level(P, "matrix")
        if eps0 is None:
            if tight <= 0:
                raise ParameterError("matrix", "all rows are identical (ε0 = 0); nothing to amplify")
            e0 = tight
        else:
            e0 = _validate.eps0(eps0)
            _validate.check_ldp(P, e0, "matrix")
        object.__setattr__(self, "_P", P)
        object.__setattr__(self, "eps0", float(e0))
        object.__setattr__(self, "eps0_tight", float(tight))

    def __repr__(self):
        D, Y = self._P.shape
        return f"MatrixMechanism(<{D}x{Y} matrix>, eps0={self.eps0!r})"

    def matrix(self) -> np.ndarray:
        return self._P

    @property
    def gamma(self) -> float:
        return float(self._P.min(axis=0).sum())

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
    def _upper_pairs(self) -> tuple:
        P = self._P
        D, Y = P.shape
        if D * (D - 1) // 2 * Y > MATRIX_PAIR_BUDGET:
            raise ResourceLimitError(f"de-duplicating all {D * (D - 1) // 2} input pairs of a {D}x{Y} "
                                     f"matrix exceeds the budget of {MATRIX_PAIR_BUDGET} operations")
        pairs, seen = [], set()
        for x0 in range(D):
            for x1 in range(x0 + 1, D):
                dec = primary_decomposition(P, x0, x1)
                k = _key_of(dec)
                if k in seen:
                    continue
                # the ordered pair (x1, x0) is this pair's swap: always dropped
                seen.add(k)
                seen.add(_key_of(dec, swap=True))
                pairs.append((x0, x1))
        return tuple(pairs)

    def upper_decompositions(self) -> list:
        return [primary_decomposition(self._P, x0, x1) for x0, x1 in self._upper_pairs]

    @functools.cached_property
    def _lower_triples(self) -> tuple:
        P = self._P
        D = P.shape[0]
        if D <= MATRIX_ALL_TRIPLES_MAX_D:
            cands = ((x0, x1, x2) for x0 in range(D) for x1 in range(D) if x1 != x0
                     for x2 in range(D) if x2 != x0)
            cap = None
        else:
            cands = ((o0, o1, x2) for x0, x1 in self._upper_pairs for o0, o1 in ((x0, x1), (x1, x0))
                     for x2 in range(D) if x2 != o0)
            cap = MATRIX_MAX_LOWER
        triples, seen = [], set()
        for x0, x1, x2 in cands:
            k = _key_of(lower_decomposition(P, x0, x1, x2))
            if k in seen:
                continue
            seen.add(k)
            triples.append((x0, x1, x2))
            if cap is not None and len(triples) >= cap:
                break
        return tuple(triples)

    def lower_decompositions(self) -> list:
        return [lower_decomposition(self._P, x0, x1, x2).simplified() for x0, x1, x2 in self._lower_triples]

    def describe(self) -> dict:
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
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        try:
            rows = [[float(tok) for tok in (ln.split(",") if "," in ln else ln.split())] for ln in lines]
        except ValueError as exc:
            raise ParameterError("matrix", f"{path!r} is not a numeric CSV matrix: {exc}") from exc
        if not rows or len({len(r) for r in rows}) != 1:
            raise ParameterError("matrix", f"{path!r}: rows must be non-empty and of equal length")
        return np.array(rows, dtype=np.float64)
    return value


#: name -> (class, required parameters, optional parameters with defaults)
MECHANISMS: dict[str, tuple[type, tuple[str, ...], dict]] = {
    "krr": (KRR, ("eps0", "k"), {}),
    "blh": (BLH, ("eps0",), {"d": None}),
    "rappor": (RAPPOR, ("eps0",), {"d": None}),
    "oue": (OUE, ("eps0",), {"d": None}),
    "hr": (HadamardResponse, ("eps0", "d"), {}),
    "laplace": (Laplace, ("eps0",), {}),
    "matrix": (MatrixMechanism, ("matrix",), {"eps0": None}),
}


def make(name: str, **params) -> Mechanism:
    """Build a mechanism from its registry name and keyword parameters.

    Parameters
    ----------
    name : str
        One of ``"krr"`` (params ``eps0``, ``k``), ``"blh"``, ``"rappor"``, ``"oue"`` (``eps0``,
        optional ``d``, default ``None`` = asymptotic), ``"hr"`` (``eps0``, ``d``), ``"laplace"``
        (``eps0``), ``"matrix"`` (``matrix`` = array or path of a CSV / whitespace-separated
        text file, optional ``eps0``). Case-insensitive.
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
    if not isinstance(name, str) or name.strip().lower() not in MECHANISMS:
        raise ParameterError("mechanism", f"unknown mechanism {name!r}; expected one of {sorted(MECHANISMS)}")
    cls, required, optional = MECHANISMS[name.strip().lower()]
    for key in params:
        if key not in required and key not in optional:
            raise ParameterError(key, f"unknown parameter for mechanism {name!r} "
                                      f"(accepted: {sorted(required + tuple(optional))})")
    for key in required:
        if key not in params:
            raise ParameterError(key, f"required for mechanism {name!r}")
    kwargs = {**optional, **params}
    if cls is MatrixMechanism:
        return MatrixMechanism(_load_matrix(kwargs["matrix"]), eps0=kwargs["eps0"])
    return cls(**kwargs)
