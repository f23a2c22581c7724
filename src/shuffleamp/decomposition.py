r"""General-clone decompositions: the one source of the GPARV map, the merge and the law key.

A general-clone decomposition of a randomizer :math:`R` for one neighbouring input pair
:math:`(x_1^0, x_1^1)` is

.. math::

    R(x_1^0) = \sum_j a_j Q_j,\quad R(x_1^1) = \sum_j b_j Q_j,\quad
    R(x_i) = \sum_j c_j Q_j + \beta\, LO(x_i),

and its generalized privacy amplification random variable (GPARV) is

.. math::

    G_\varepsilon = \frac{a_j - e^{\varepsilon} b_j}{c_j} \text{ w.p. } c_j, \qquad 0 \text{ w.p. } \beta

(Su, Cheng, Wang, Definition 9 and Theorem 12).  This module holds

* :class:`Decomposition` (the only implementation of that map, :meth:`Decomposition.gparv`),
* :func:`merge_by_ratio` (the only merge of components with equal likelihood ratios; used by
  :meth:`Decomposition.simplified`, :func:`product_decomposition` and :func:`mixture`),
* :func:`law_key` / :func:`dedupe` (the only law key and de-duplication of GPARV families), computed
  by :func:`law_keys` for many decompositions at once (:func:`merge_rows` is the batched merge by
  ratio that :func:`merge_by_ratio` also runs); the validation of the masses, the merge and the law key
  run compiled (``kernels.clean_masses``, ``kernels.merge_sorted``, ``kernels.law_key_rows``: one
  implementation each, for one family or a batch; only the ratio keys are numpy's, :func:`ratio_keys`),
* :func:`chernoff_bounds` (certified Chernoff bounds of many families at one ε, for screening),
* :func:`product_decomposition` (joint composition) and :func:`mixture` / :class:`MixtureFamily`
  (parallel composition),
* :func:`primary_decomposition`, :func:`lower_decomposition` (matrix randomizers) and
  :func:`clone_decomposition` (the standard clone).

References
----------
.. [SCW] J. Su, Y. Cheng, T. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification
   via Shuffling", IEEE S&P 2026; short version "A Unified Framework and Efficient Computation for
   Privacy Amplification via Shuffling", arXiv:2504.07414.
.. [FMT21] V. Feldman, A. McMillan, K. Talwar, "Hiding Among the Clones: A Simple and Nearly
   Optimal Analysis of Privacy Amplification by Shuffling", FOCS 2021.
.. [FMT23] V. Feldman, A. McMillan, K. Talwar, "Stronger Privacy Amplification by Shuffling for
   Rényi and Approximate Differential Privacy", SODA 2023.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Hashable, Protocol, Sequence, runtime_checkable

import numpy as np

from ._ext import kernels
from .errors import NotLDPError, ParameterError
from .gparv import ContinuousPart, Gparv

__all__ = ["Decomposition", "GparvFamily", "MixtureFamily", "law_key", "dedupe", "merge_by_ratio",
           "product_decomposition", "mixture", "primary_decomposition", "lower_decomposition",
           "clone_decomposition", "RATIO_RTOL", "LAW_KEY_DIGITS", "law_keys", "merge_rows", "ratio_keys",
           "chernoff_bounds", "pack", "PackedFamilies", "small_decomposition"]

#: Relative precision at which likelihood ratios are considered equal when merging components.
RATIO_RTOL = 1e-10
#: Decimal digits kept by the law key (ratios and masses are rounded to this many digits).
LAW_KEY_DIGITS = 12
_KEY_SCALE = float(10 ** LAW_KEY_DIGITS)


# ----------------------------------------------------------------------------- protocol
@runtime_checkable
class GparvFamily(Protocol):
    """Anything the bounds code can evaluate: an ε-indexed family of GPARV laws.

    Implemented by :class:`Decomposition`, :class:`MixtureFamily` and
    :class:`shuffleamp.mechanisms.LaplaceFamily`.

    Attributes
    ----------
    label : str
        Free text naming the input pair / dataset / case.
    """

    label: str

    def gparv(self, epsilon: float) -> Gparv:
        """The GPARV law at central ε (nats).

        Parameters
        ----------
        epsilon : float
            Central ε in nats, >= 0.

        Returns
        -------
        Gparv
            The privacy-amplification random variable of the pair at ε ([SCW] Theorems 12-13).
        """

    def swapped(self) -> "GparvFamily":
        """The family of the reversed pair (may return ``self`` when the law is symmetric).

        Returns
        -------
        GparvFamily
            The family with the roles of :math:`x_1^0` and :math:`x_1^1` exchanged (may be ``self``).
        """


# ----------------------------------------------------------------------------- the one merge
def merge_by_ratio(a: np.ndarray, b: np.ndarray, c: np.ndarray, rtol: float = RATIO_RTOL):
    r"""Merge components with equal likelihood ratios :math:`(a_j/c_j, b_j/c_j)`; masses are summed.

    Components with equal ratios give the same GPARV value, so merging them does not change the
    law ([SCW] Theorem 7 and Remark 4, Algorithm 6).

    Parameters
    ----------
    a, b, c : ndarray of float64, shape (k,)
        Component masses (non-negative).
    rtol : float, optional
        Ratios are compared after rounding their logarithms to multiples of ``rtol``
        (relative precision; default :data:`RATIO_RTOL`).

    Returns
    -------
    a, b, c : ndarray of float64, shape (m,)
        Merged masses, ordered by the rounded (log r0, log r1) key.  Components whose blanket mass
        underflowed to 0 while ``a`` and ``b`` are negligible (< 1e-300, e.g. a denormal weight) are
        dropped; if another component has ``c = 0`` the arrays are returned unmerged (for
        :class:`Decomposition` to reject).
    """
    drop = (c <= 0) & (a < 1e-300) & (b < 1e-300)
    if drop.any():
        a, b, c = a[~drop], b[~drop], c[~drop]
    if a.size <= 1 or (c <= 0).any():
        return a, b, c
    _, a, b, c, _, _ = merge_rows(a[None, :], b[None, :], c[None, :], rtol)
    return a, b, c


def _read_only_copy(arr) -> np.ndarray:
    """A read-only float64 copy of ``arr``."""
    arr = np.array(arr, dtype=np.float64)
    arr.setflags(write=False)
    return arr


def _frozen(arr) -> bool:
    """True for a read-only float64 ndarray whose bases are all read-only (no one can write its memory)."""
    if type(arr) is not np.ndarray or arr.dtype != np.float64:
        return False
    while arr is not None:
        if not isinstance(arr, np.ndarray) or arr.flags.writeable:
            return False
        arr = arr.base
    return True


# ----------------------------------------------------------------------------- the one GPARV map
def _gparv_values(a, b, c, e: float):
    """GPARV atom values ``(a - e b) / c`` with ``e = exp(epsilon)`` ([SCW] Theorem 12), element-wise."""
    return (a - e * b) / c


# ----------------------------------------------------------------------------- decomposition
@dataclass(frozen=True)
class Decomposition:
    r"""A general-clone decomposition of a randomizer for one input pair ([SCW] Definition 7).

    .. math::

        R(x_1^0) = \sum_j a_j Q_j,\quad R(x_1^1) = \sum_j b_j Q_j,\quad
        R(x_i) = \sum_j c_j Q_j + \beta\, LO(x_i).

    With ``c = inf_x R(x)(y)`` this is the blanket (primary optimal) decomposition
    ([SCW] Theorem 5); with components merged by ratio it is the simplified form (Theorem 7).
    A Theorem-14 lower-bound decomposition has ``c = R(x_2)`` and ``beta = 0``.
    The arrays are read-only after construction.

    Parameters
    ----------
    a, b, c : array_like of float, shape (k,)
        Component masses; ``sum(a) = sum(b) = 1``, ``sum(c) + beta = 1``.
    beta : float, optional
        Residual (left-over) mass; defaults to ``1 - sum(c)``.
    label : str, optional
        Free text (for example which input pair this is).

    Raises
    ------
    ParameterError
        If masses are negative or not finite, or do not sum to one (parameters ``'a'``, ``'b'``,
        ``'c'``, ``'beta'``).
    NotLDPError
        If some component has ``c_j = 0`` while ``a_j + b_j > 0`` (not absolutely continuous,
        [SCW] Theorem 12; parameter ``'decomposition'``).

    References
    ----------
    [SCW] Definitions 7 and 9, Theorems 5, 7 and 12.
    """

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    beta: float | None = None
    label: str = ""

    def __post_init__(self):
        a = np.asarray(self.a, dtype=np.float64).ravel()
        b = np.asarray(self.b, dtype=np.float64).ravel()
        c = np.asarray(self.c, dtype=np.float64).ravel()
        if a.shape == b.shape == c.shape:
            X = np.array((a, b, c))                # a copy, shape (3, k)
            if X.size and X.min() >= 0 and X.max() < math.inf and self._set_clean(X):
                return
        self._validate_slow()

    def _set_clean(self, X) -> bool:
        """The checks and normalisation of :meth:`_validate_slow` for finite masses >= 0, on the stacked
        ``(3, k)`` copy ``X``, by the compiled validation (``kernels.clean_masses``); False when a check fails
        (the slow path then raises the error)."""
        beta = 1.0 - X[2].sum() if self.beta is None else float(self.beta)
        cl = kernels.clean_masses(X, float(beta))
        if cl is None:
            return False
        Y, b = cl
        for i, name in enumerate(("a", "b", "c")):
            object.__setattr__(self, name, Y[i])
        object.__setattr__(self, "beta", beta if b == beta else b)
        return True

    def _validate_slow(self):
        a = np.asarray(self.a, dtype=np.float64).ravel().copy()
        b = np.asarray(self.b, dtype=np.float64).ravel().copy()
        c = np.asarray(self.c, dtype=np.float64).ravel().copy()
        if not (a.shape == b.shape == c.shape):
            raise ParameterError("decomposition", "a, b and c must have the same length")
        for name, x in (("a", a), ("b", b), ("c", c)):
            if not np.isfinite(x).all():
                raise ParameterError(name, "must be finite")
            if (x < -1e-15).any():
                raise ParameterError(name, "masses must be >= 0")
        a, b, c = np.maximum(a, 0), np.maximum(b, 0), np.maximum(c, 0)
        beta = 1.0 - c.sum() if self.beta is None else float(self.beta)
        if beta < -1e-12:
            raise ParameterError("c", f"blanket masses sum to {c.sum()!r} > 1")
        beta = max(beta, 0.0)
        for name, x in (("a", a), ("b", b)):
            if abs(x.sum() - 1) > 1e-9:
                raise ParameterError(name, f"masses sum to {x.sum()!r}, not 1")
        if abs(c.sum() + beta - 1) > 1e-9:
            raise ParameterError("beta", "sum(c) + beta must be 1")
        bad = (c <= 0) & ((a > 0) | (b > 0))
        if bad.any():
            raise NotLDPError("decomposition", "a component has c_j = 0 but a_j + b_j > 0 "
                              "(not absolutely continuous; the randomizer is not pure LDP)")
        keep = (a > 0) | (b > 0) | (c > 0)
        for name, arr in (("a", a[keep]), ("b", b[keep]), ("c", c[keep])):
            arr.setflags(write=False)          # after the (copying) boolean slice
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "beta", beta)

    @property
    def gamma(self) -> float:
        """Blanket mass γ = Σ c_j (the total-variation similarity for the blanket decomposition)."""
        return float(self.c.sum())

    @property
    def ratios(self) -> tuple[np.ndarray, np.ndarray]:
        """(r0, r1) = (a/c, b/c) per component, float64 arrays of shape (k,) ([SCW] Theorem 7)."""
        return self.a / self.c, self.b / self.c

    def law_key(self, digits: int = LAW_KEY_DIGITS) -> tuple:
        """Hashable key equal for two decompositions iff their GPARVs have the same law at every ε.

        Parameters
        ----------
        digits : int, optional
            Ratios, masses and β are rounded to this many decimal digits.

        Returns
        -------
        tuple
            ``(β, bytes)``: β rounded, then the ``(r0_j, r1_j, c_j)`` rows of the
            simplified decomposition (components merged by :func:`merge_by_ratio`'s rule),
            rounded, in the order of their merge keys, as float64 bytes (computed by
            :func:`law_keys`; cached).
        """
        if digits == LAW_KEY_DIGITS:
            d = self.__dict__
            k = d.get("_law_key")
            if k is None:
                k, sk = _law_key_pair(self._merge(), self.beta)      # this law's key and its swap's
                if "_swap_key" not in d:
                    object.__setattr__(self, "_swap_key", sk)
                object.__setattr__(self, "_law_key", k)
            return k
        return law_keys(self.a[None, :], self.b[None, :], self.c[None, :], self.beta, digits=digits)[0]

    def _merge(self) -> tuple:
        """``merge_rows(a[None], b[None], c[None])`` at the default ``rtol`` (cached): the one merge behind
        :meth:`law_key` and :meth:`simplified`, and (reordered) behind those of :meth:`swapped`."""
        d = self.__dict__
        mg = d.get("_merged")
        if mg is None:
            src = d.get("_swap_of")
            smg = None if src is None else src.__dict__.get("_merged")
            if smg is not None:
                # merge_rows(b, a, c) has the same groups (keys (k1, k0)), summed in the same order, sorted
                # by (k1, k0): the source's merge reordered (the keys are unique within the row)
                row, a, b, c, k0, k1 = smg
                order = np.lexsort((k0, k1))
                mg = (row, b[order], a[order], c[order], k1[order], k0[order])
            else:
                mg = merge_rows(self.a[None, :], self.b[None, :], self.c[None, :])
            object.__setattr__(self, "_merged", mg)
        return mg

    @classmethod
    def _trusted(cls, a, b, c, beta: float, label: str = "", key=None, swap_key=None,
                 share: bool = False) -> "Decomposition":
        """Build without validation from arrays the caller has already checked (batch constructors).

        The caller guarantees what :meth:`__post_init__` checks: equal shapes, finite masses >= 0,
        ``c > 0`` on every component, ``sum(a) = sum(b) = 1`` and ``sum(c) + beta = 1``.  ``key`` /
        ``swap_key`` are this law's and the swapped law's :func:`law_keys` (cached when given).
        Read-only float64 arrays whose memory no one can write (another decomposition's) are shared,
        others copied; ``share=True`` asserts that all three are such arrays.
        """
        self = object.__new__(cls)
        if not share:
            a, b, c = (arr if _frozen(arr) else _read_only_copy(arr) for arr in (a, b, c))
        d = self.__dict__                   # frozen dataclass: the fields set directly, as object.__setattr__
        d["a"], d["b"], d["c"], d["beta"], d["label"] = a, b, c, float(beta), label
        if key is not None:
            d["_law_key"] = key
        if swap_key is not None:
            d["_swap_key"] = swap_key
        return self

    def swapped(self) -> "Decomposition":
        """The decomposition for the reversed pair (x_1^1, x_1^0): ``a`` and ``b`` exchanged.

        Returns
        -------
        Decomposition
            The family with the roles of :math:`x_1^0` and :math:`x_1^1` exchanged (may be ``self``).
        """
        d = self.__dict__
        sw = Decomposition._trusted(self.b, self.a, self.c, self.beta, label=self.label + " (swapped)",
                                    key=d.get("_swap_key"), swap_key=d.get("_law_key"), share=True)
        object.__setattr__(sw, "_swap_of", self)        # its merge, when needed, is this one's reordered
        return sw

    def simplified(self, rtol: float = RATIO_RTOL) -> "Decomposition":
        """Merge components with equal ratios (a_j/c_j, b_j/c_j) with :func:`merge_by_ratio`.

        Parameters
        ----------
        rtol : float, optional
            Relative precision of the ratio comparison.

        Returns
        -------
        Decomposition
            Same GPARV law at every ε, fewer components ([SCW] Theorem 7, Algorithm 6).
        """
        if rtol != RATIO_RTOL:
            a, b, c = merge_by_ratio(self.a, self.b, self.c, rtol)
            return Decomposition(a, b, c, self.beta, label=self.label)
        out = self.__dict__.get("_simplified")
        if out is None:
            if self.a.size > 1 and (self.c > 0).all():
                # merge_by_ratio drops nothing here (c > 0) and runs exactly this merge
                a, b, c = self._merge()[1:4]
            else:
                a, b, c = merge_by_ratio(self.a, self.b, self.c, rtol)
            out = Decomposition(a, b, c, self.beta, label=self.label)
            object.__setattr__(self, "_simplified", out)
        return out

    def gparv(self, epsilon: float) -> Gparv:
        r"""The GPARV :math:`G_\varepsilon` of this decomposition ([SCW] Theorem 12).

        Parameters
        ----------
        epsilon : float
            Central ε in nats.

        Returns
        -------
        Gparv
            Atoms :math:`(a_j - e^\varepsilon b_j)/c_j` w.p. :math:`c_j` and 0 w.p. β.
        """
        vals = _gparv_values(self.a, self.b, self.c, math.exp(float(epsilon)))
        return Gparv(np.append(vals, 0.0), np.append(self.c, self.beta))

    @classmethod
    def from_pqr(cls, eps0: float, p: float, q: float, r: float, label: str = "") -> "Decomposition":
        """Five-component form of extreme-property mechanisms ([SCW] Table 2 parametrisation).

        Components with ratio (E, 1), (1, E), (E, E), (1, 1) and blanket masses p, p, q, r, residual
        1 − 2p − q − r; ``E = e^{eps0}``.

        Parameters
        ----------
        eps0 : float
            Local ε0 in nats.
        p, q, r : float
            Blanket masses (non-negative, ``2p + q + r <= 1``).
        label : str, optional
            Label of the result.

        Returns
        -------
        Decomposition
        """
        E = math.exp(eps0)
        c = [p, p, q, r]
        a = [E * p, p, E * q, r]
        b = [p, E * p, E * q, r]
        # renormalise away float noise in the closed forms (sums are exactly 1 analytically); left-to-right sums
        sa, sb = _seq_sum(a), _seq_sum(b)
        a, b, beta = [x / sa for x in a], [x / sb for x in b], 1.0 - _seq_sum(c)
        if cls is Decomposition:
            return small_decomposition(a, b, c, beta, label=label)
        return cls(np.array(a), np.array(b), np.array(c), beta, label=label)


# ----------------------------------------------------------------------------- batch law keys
def ratio_keys(num: np.ndarray, den: np.ndarray, rtol: float = RATIO_RTOL, quiet: bool = False) -> np.ndarray:
    """The merge key of :func:`merge_by_ratio`: ``round(log(max(num/den, 1e-300)) / rtol)`` as int64.

    Parameters
    ----------
    num, den : ndarray of float64 (broadcastable)
        Masses whose ratio is keyed (``den > 0``).
    rtol : float, optional
        Relative precision of the ratio comparison.
    quiet : bool, optional
        The caller guarantees that ``num / den`` is finite (no floating-point warning to silence).

    Returns
    -------
    ndarray of int64
        Equal keys mean ratios equal to relative precision ``rtol`` (log-ratios clipped to [-800, 800]).
    """
    if quiet:
        lr = np.divide(num, den)
    else:
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            lr = np.divide(num, den)
    # the same ufuncs as log(maximum(.)), clip(., -800, 800), round(. / rtol), in place (fewer temporaries);
    # the lower clip is a no-op after the floor (log(1e-300) > -691; NaN stays NaN), so it is not run
    np.maximum(lr, 1e-300, out=lr)
    np.log(lr, out=lr)
    np.minimum(lr, 800.0, out=lr)
    np.divide(lr, rtol, out=lr)
    np.rint(lr, out=lr)
    return lr.astype(np.int64)


def merge_rows(A: np.ndarray, B: np.ndarray, C: np.ndarray, rtol: float = RATIO_RTOL, keys=None):
    r"""Row-wise :func:`merge_by_ratio` of ``m`` decompositions with ``k`` components each.

    Parameters
    ----------
    A, B, C : ndarray of float64, shape (m, k)
        Component masses of ``m`` decompositions (``C > 0`` everywhere).
    rtol : float, optional
        As in :func:`merge_by_ratio`.
    keys : tuple of two int64 arrays of shape (m, k), optional
        The merge keys ``round(log(A/C)/rtol)``, ``round(log(B/C)/rtol)`` if already computed.

    Returns
    -------
    row : ndarray of int64, shape (s,)
        Decomposition (row) index of each merged component, non-decreasing.
    a, b, c : ndarray of float64, shape (s,)
        Merged masses: within one row, components with equal rounded log-ratio keys
        ``(log a/c, log b/c)`` are summed (the rule of :func:`merge_by_ratio`).
    k0, k1 : ndarray of int64, shape (s,)
        The merge keys of the merged components; within a row the components are sorted by
        ``(k0, k1)`` (strictly increasing).
    """
    m, k = A.shape
    if not (m and k):           # nothing to merge (empty arrays, as np.bincount of no weights gives)
        return tuple(np.zeros(0, dtype=np.int64) for _ in range(6))
    if keys is None:
        K0, K1 = ratio_keys(np.array((A, B)), C, rtol)        # one elementwise pass over both
    else:
        K0, K1 = keys
    f, i = np.float64, np.int64
    return kernels.merge_sorted(np.ascontiguousarray(A, f), np.ascontiguousarray(B, f), np.ascontiguousarray(C, f),
                                np.ascontiguousarray(K0, i), np.ascontiguousarray(K1, i))


def _law_key_pair(merged, beta) -> tuple:
    """The law keys of one merged decomposition and of its swap (:func:`law_keys` without and with
    ``swapped=True``), from its merge (:func:`merge_rows`' output)."""
    row, a, b, c, k0, k1 = merged
    bt = np.array([float(beta)])
    return (kernels.law_key_rows(row, a, b, c, k0, k1, bt, 1, _KEY_SCALE, False)[0],
            kernels.law_key_rows(row, a, b, c, k0, k1, bt, 1, _KEY_SCALE, True)[0])


def _seq_sum(xs) -> float:
    """Left-to-right sum from 0.0 (the normalisation of the closed-form masses of :meth:`Decomposition.from_pqr`)."""
    s = 0.0
    for x in xs:
        s += x
    return s


def _merge_clean(X) -> tuple:
    """:func:`merge_rows` of one validated decomposition ``X`` (rows a, b, c; every c > 0, masses <= 1 + 1e-9)."""
    K = ratio_keys(X[:2], X[2], quiet=bool(X[2].min() > 1e-300))       # finite ratios: no warning to silence
    return merge_rows(X[0:1], X[1:2], X[2:3], keys=(K[0:1], K[1:2]))


def small_decomposition(a, b, c, beta: float, label: str = "", simplify: bool = False) -> "Decomposition":
    """``Decomposition(a, b, c, beta, label)`` (``.simplified()`` if ``simplify``) with its law key and its swap's
    cached, built by the compiled constructor: validation (``kernels.clean_masses``), merge by ratio
    (:func:`merge_rows`) and law keys (``kernels.law_key_rows``), a few calls for a family of a few components.

    Parameters
    ----------
    a, b, c : sequence of float
        Component masses (as for :class:`Decomposition`).
    beta : float
        Residual mass (explicit).
    label : str, optional
        Label of the result.
    simplify : bool, optional
        Return the simplified decomposition (components merged by ratio, :meth:`Decomposition.simplified`).

    Returns
    -------
    Decomposition
        The same arrays, β and law keys as ``Decomposition(a, b, c, beta, label)`` (``.simplified()``).

    Raises
    ------
    ParameterError, NotLDPError
        As :class:`Decomposition` (the input is then handed to it).

    References
    ----------
    [SCW] Definition 7 and Theorem 7 (components with equal ratios merged: the same GPARV law).
    """
    try:
        X = np.array((a, b, c), dtype=np.float64)
        cl = kernels.clean_masses(X, float(beta)) if X.ndim == 2 and beta is not None else None
    except (TypeError, ValueError):
        cl = None
    if cl is None:
        d = Decomposition(np.array(a, dtype=np.float64), np.array(b, dtype=np.float64),
                          np.array(c, dtype=np.float64), beta, label=label)
        return d.simplified() if simplify else d
    X, beta = cl
    mg = _merge_clean(X)
    if simplify and mg[1].size < X.shape[1]:
        # simplified(): the merged masses, validated as a new decomposition, and their own merge
        cl = kernels.clean_masses(np.array(mg[1:4]), beta)
        if cl is None:
            return Decomposition(mg[1], mg[2], mg[3], beta, label=label)
        X, beta = cl
        mg = _merge_clean(X)
    elif simplify:
        # nothing merged: the simplified masses are the input's in merge-key order (the same floats), whose own
        # merge is themselves
        X = np.array(mg[1:4])
        X.setflags(write=False)
    key, swap_key = _law_key_pair(mg, beta)
    d = Decomposition._trusted(X[0], X[1], X[2], beta, label=label, key=key, swap_key=swap_key, share=True)
    d.__dict__["_merged"] = mg
    return d


def law_keys(A: np.ndarray, B: np.ndarray, C: np.ndarray, beta, digits: int = LAW_KEY_DIGITS,
             swapped: bool = False, merged=None) -> list:
    """Law keys of ``m`` decompositions at once (the one implementation of :meth:`Decomposition.law_key`).

    Parameters
    ----------
    A, B, C : ndarray of float64, shape (m, k)
        Component masses (``C > 0`` everywhere).
    beta : float or ndarray of shape (m,)
        Residual masses.
    digits : int, optional
        Decimal digits kept for ratios, masses and β.
    swapped : bool, optional
        Keys of the swapped decompositions (``a`` and ``b`` exchanged) instead.
    merged : tuple, optional
        The output of :func:`merge_rows` for ``(A, B, C)`` if already computed.

    Returns
    -------
    list of tuple
        ``(round(beta), bytes of the rounded (r0, r1, c) rows sorted by their merge keys)`` per
        decomposition: equal keys mean equal laws (up to the rounding; de-duplication is an
        optimisation, a missed duplicate costs time only).
    """
    m = A.shape[0]
    row, a, b, c, k0, k1 = merge_rows(A, B, C) if merged is None else merged
    f, i = np.float64, np.int64
    betas = np.ascontiguousarray(np.broadcast_to(np.asarray(beta, dtype=f), (m,)))
    return kernels.law_key_rows(np.ascontiguousarray(row, i), np.ascontiguousarray(a, f), np.ascontiguousarray(b, f),
                                np.ascontiguousarray(c, f), np.ascontiguousarray(k0, i), np.ascontiguousarray(k1, i),
                                betas, m, float(10 ** digits), swapped)


# ----------------------------------------------------------------------------- certified screening
def pack(families) -> tuple:
    """Concatenated (a, b, c), betas and offsets of atomic decompositions (the kernels' packed layout).

    Parameters
    ----------
    families : sequence of Decomposition, or PackedFamilies

    Returns
    -------
    (a, b, c, beta, off)
        Contiguous float64 arrays ``a, b, c`` (all components, family after family), ``beta`` of shape
        (F,), and ``off`` (intp, shape (F + 1,)): family ``f`` holds components ``off[f]:off[f + 1]``.
    """
    if not families:
        z = np.zeros(0)
        return z, z, z, z, np.zeros(1, dtype=np.intp)
    if isinstance(families, PackedFamilies):      # the same values without building the entries' objects
        return tuple(x.copy() for x in families.pack())
    if len(families) == 1:              # one family: its own arrays (the same values as the concatenation)
        f = families[0]
        return (np.ascontiguousarray(f.a, dtype=np.float64), np.ascontiguousarray(f.b, dtype=np.float64),
                np.ascontiguousarray(f.c, dtype=np.float64), np.array([float(f.beta)]),
                np.array([0, f.a.size], dtype=np.intp))
    off = np.zeros(len(families) + 1, dtype=np.intp)
    off[1:] = np.cumsum([f.a.size for f in families])
    return (np.ascontiguousarray(np.concatenate([f.a for f in families]), dtype=np.float64),
            np.ascontiguousarray(np.concatenate([f.b for f in families]), dtype=np.float64),
            np.ascontiguousarray(np.concatenate([f.c for f in families]), dtype=np.float64),
            np.array([float(f.beta) for f in families]), off)


#: Iteration cap of the safeguarded Newton search for the Chernoff θ of :func:`chernoff_bounds`.
CHERNOFF_ITERATIONS = 40
_DBL_EPS = float(np.finfo(np.float64).eps)


def chernoff_bounds(families, n: int, epsilon: float, packed=None, stop: float = 0.0) -> np.ndarray:
    r"""Certified Chernoff bounds :math:`\delta \le e^{nK(\theta)}/(e\theta n)` of many families at one ε.

    With :math:`K(\theta) = \log E[e^{\theta G_\varepsilon}]`: since
    :math:`s_+ \le e^{\theta s}/(e\theta)` for every :math:`\theta > 0`,
    :math:`\delta = \tfrac1n E[(G_1 + \dots + G_n)_+] \le e^{nK(\theta)}/(e\theta n)` for **every**
    θ > 0, so the θ need not be optimal: it is found by a compiled safeguarded Newton search
    (``kernels.chernoff_log_theta``, one family at a time) on
    :math:`nK'(\theta) = 1/\theta` in :math:`\log\theta` (bracket [-40, 40], increasing function,
    bisection when a step leaves the bracket), a handful of iterations instead of a fixed bisection.
    At that θ the factor :math:`1/(e\theta)` is replaced by the Berry-Esseen refinement of
    :func:`_log_tilted_factor` when it is smaller (it gains a factor of order :math:`1/\sqrt n`).
    :math:`K` and the tilted moments are evaluated in C in log-sum-exp form; the result is rounded up by
    n times a bound on the absolute rounding error of K (the cancellation between the largest exponent and
    the log of the sum, which dominates at large n) and by a relative margin.
    A family whose atoms are all <= 0 gets 0 (its δ is 0); families that are not
    :class:`Decomposition` get ``inf`` (no cheap bound).

    Parameters
    ----------
    families : sequence of GparvFamily
        The families (atomic :class:`Decomposition` are bounded).
    n : int
        Number of users, >= 1.
    epsilon : float
        Central ε in nats.
    packed : tuple, optional
        ``pack(families)`` if already computed (then every family must be a :class:`Decomposition`).
    stop : float, optional
        A family's θ search stops as soon as its plain Chernoff bound is below ``stop`` (its returned
        bound is still certified, usually below ``stop``, but not the tightest): for callers that only
        compare the bounds with ``stop``.  0 (default): every search runs to convergence.

    Returns
    -------
    ndarray of float64, shape (len(families),)
        Certified upper bounds on each family's δ(ε) (``inf`` when none is available).

    References
    ----------
    [SCW] Theorem 12 (the functional); the Chernoff bound is standard.
    """
    out = np.full(len(families), np.inf)
    if packed is None and isinstance(families, PackedFamilies):
        packed = families.pack()
    if packed is None:
        idx = [i for i, f in enumerate(families) if isinstance(f, Decomposition)]
        if not idx:
            return out
        packed = pack([families[i] for i in idx])
    else:
        idx = slice(None)
    a, b, c, beta, off = packed
    n = float(n)
    # the θ search (any θ > 0 is valid) and the tilted statistics at θ: compiled, one family at a time;
    # families without a positive atom (δ = 0) are flagged
    u, positive, st = kernels.chernoff_log_theta(a, b, c, beta, off, float(epsilon), n, CHERNOFF_ITERATIONS,
                                                 math.log(stop) if stop > 0.0 else -math.inf)
    K = st[:, 0]
    kmax = int(np.max(np.diff(off), initial=0)) + 1     # terms of the sums (atoms and residual), for margins
    with np.errstate(invalid="ignore", over="ignore"):
        logb = n * K + _log_tilted_factor(np.exp(u), st[:, 1], st[:, 2], st[:, 3], st[:, 4], kmax, n) - math.log(n)
        # rounding: of K (absolute, from the kernel: the cancellation in max + log-sum, times n), then a
        # relative margin on nK and on the sum
        logb = logb + n * st[:, 5] + 1e-9 * (1.0 + np.abs(n * K)) + 64 * _DBL_EPS * (1.0 + np.abs(logb))
        vals = np.exp(np.minimum(logb, 700.0))
    vals = np.where(positive == 0, 0.0, vals)
    out[idx] = np.where(np.isfinite(vals), vals, np.inf)
    return out


#: Berry-Esseen constant for sums of i.i.d. variables: sup_x |F_n(x) - Phi(x)| <= C rho / (sigma^3 sqrt(n))
#: with C = 0.4748 (I. Shevtsova, "On the absolute constants in the Berry-Esseen type inequalities for
#: identically distributed summands", arXiv:1111.6554, 2011).
BERRY_ESSEEN_C = 0.4748


def _log_tilted_factor(th, m1, var, rho, absm, k: int, n: float) -> np.ndarray:
    r"""Upper bound on :math:`\log E_\theta[S_+ e^{-\theta S}]` for the sum S of n i.i.d. tilted GPARVs.

    :math:`E[S_+] = e^{nK(\theta)} E_\theta[h(S)]` with :math:`h(s) = s_+ e^{-\theta s} \le 1/(e\theta)`
    (the Chernoff factor).  Since :math:`E[h(S)] = \int_0^\infty h'(s) P(S > s) ds` and
    :math:`\int_0^\infty |h'| = 2/(e\theta)`, the Berry-Esseen bound
    :math:`\sup|P(S > s) - P(Z > s)| \le \beta = C\rho/(\sigma^3\sqrt n)` for the Gaussian Z with
    the tilted mean and variance gives :math:`E[h(S)] \le E[h(Z)] + 2\beta/(e\theta)`, with
    :math:`E[h(Z)] = e^{-\theta m + \theta^2 s^2/2}\, s\,(x\Phi(x) + \varphi(x))`,
    :math:`x = (m - \theta s^2)/s`, and for :math:`x < -2` the Mills-ratio bound
    :math:`x\Phi(x) + \varphi(x) \le \varphi(x)/(1 + x^2)`.  The smaller of the two factors is
    returned, with margins for the rounding of the tilted moments.
    ``m1, var, rho, absm`` are the tilted mean, variance, third absolute central moment and mean of |V| of
    one GPARV (per family), computed as sums of at most ``k`` terms each.
    """
    from scipy.special import ndtr

    chern = -1.0 - np.log(th)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        s = np.sqrt(n * var)
        m = n * m1
        # rounding of the tilted mean and standard deviation, as a shift of the normal cdf
        dm = 8.0 * (k + 2) * _DBL_EPS * n * absm
        beta = (BERRY_ESSEEN_C * rho * (1.0 + 1e-9) / (var ** 1.5 * math.sqrt(n))
                + dm / (s * math.sqrt(2.0 * math.pi)) + 0.25 * 8.0 * (k + 2) * _DBL_EPS + 1e-12)
        x = (m - th * s * s) / s
        xs = np.maximum(x, -2.0)
        direct = -th * m + 0.5 * (th * s) ** 2 + np.log(s) + np.log(xs * ndtr(xs) + np.exp(-0.5 * xs * xs)
                                                                  / math.sqrt(2.0 * math.pi))
        mills = -0.5 * (m / s) ** 2 + np.log(s) - 0.5 * math.log(2.0 * math.pi) - np.log1p(x * x)
        lg = np.where(x < -2.0, mills, direct)
        lg = lg + 1e-9 * (1.0 + np.abs(th * m) + 0.5 * (th * s) ** 2 + np.abs(np.log(s)))
        refined = np.logaddexp(lg, np.log(2.0 * beta) + chern)
    ok = np.isfinite(refined) & (var > 0) & (s > 0)
    return np.where(ok, np.minimum(chern, refined), chern)


# ----------------------------------------------------------------------------- the one law key
def law_key(family) -> Hashable:
    """The law key of a GPARV family: equal keys iff the same GPARV law at every ε.

    Parameters
    ----------
    family : GparvFamily
        A :class:`Decomposition` (keyed by :meth:`Decomposition.law_key`), any object with its
        own ``law_key()`` method (e.g. :class:`MixtureFamily`, ``LaplaceFamily``), or any other
        family (keyed by identity).

    Returns
    -------
    Hashable
    """
    if isinstance(family, Decomposition):
        return ("dec", family.law_key())
    own = getattr(family, "law_key", None)
    if callable(own):
        return (type(family).__name__, own())
    return ("id", id(family))


def dedupe(families) -> list:
    """Drop the families whose :func:`law_key` equals an earlier one's (order kept).

    Parameters
    ----------
    families : iterable of GparvFamily

    Returns
    -------
    list
    """
    families = list(families)
    if len(families) <= 1:
        return families                 # nothing to compare: no law key is computed
    out, seen = [], set()
    for f in families:
        k = law_key(f)
        if k not in seen:
            seen.add(k)
            out.append(f)
    return out


# ----------------------------------------------------------------------------- products and mixtures
def product_decomposition(factors: Sequence[Decomposition], label: str = "", memo: dict | None = None) -> Decomposition:
    r"""Cartesian product of decompositions (joint composition, [SCW] Theorem 9).

    Parameters
    ----------
    factors : sequence of Decomposition
        One decomposition per coordinate: blanket decompositions of a differing coordinate,
        :math:`(u, u)` decompositions of an agreeing one, or Theorem-14 decompositions (``beta = 0``).
    label : str
        Label of the result.
    memo : dict, optional
        Partial products already computed, keyed by the identities of their leading factors (several
        products over the same factor objects share their prefixes; the same arrays as recomputing).

    Returns
    -------
    Decomposition
        Components :math:`(\prod a^{(i)}, \prod b^{(i)}, \prod c^{(i)})` over the non-residual parts,
        merged by ratio after every factor; every product containing a residual goes to the
        residual :math:`\beta = 1 - \prod_i (1 - \beta_i)`.
    """
    a = b = c = np.ones(1)
    prefix = ()
    for i, f in enumerate(factors):
        prefix += (id(f),)
        hit = memo.get(prefix) if memo is not None else None
        if hit is not None:
            a, b, c = hit[0]
            continue
        s = f.simplified()
        a = np.multiply.outer(a, s.a).ravel()
        b = np.multiply.outer(b, s.b).ravel()
        c = np.multiply.outer(c, s.c).ravel()
        a, b, c = merge_by_ratio(a, b, c)
        if memo is not None:
            memo[prefix] = ((a, b, c), tuple(factors[: i + 1]))      # the factors kept alive: ids stay unique
    return Decomposition(a, b, c, None, label=label)


@dataclass(frozen=True)
class MixtureFamily:
    """Weight-mixture of GPARV families (parallel composition with a continuous component).

    Same interface as :class:`Decomposition` for the bounds code: :meth:`gparv` returns the
    mixture law, :meth:`swapped` the mixture of the swapped parts ([SCW] Theorem 11).

    Parameters
    ----------
    parts : tuple of (float, GparvFamily)
        Weights (summing to one) and families.
    label : str
        Free text (which case this is).
    """

    parts: tuple
    label: str = ""

    def gparv(self, epsilon: float) -> Gparv:
        """The mixture GPARV at central ε (nats): atoms and continuous parts weighted by the parts' weights.

        Parameters
        ----------
        epsilon : float
            Central ε in nats, >= 0.

        Returns
        -------
        Gparv
            The privacy-amplification random variable of the pair at ε ([SCW] Theorems 12-13).
        """
        vals, probs, conts = [], [], []
        for w, fam in self.parts:
            if w <= 0:
                continue
            g = fam.gparv(epsilon)
            vals.append(g.values)
            probs.append(w * g.probs)
            if g.continuous is not None and g.continuous.mass > 0:
                conts.append((w, g.continuous))
        return Gparv(np.concatenate(vals), np.concatenate(probs), _mix_continuous(conts))

    def swapped(self) -> "MixtureFamily":
        """Mixture of the parts' swapped families (``self`` if every part is its own swap).

        Returns
        -------
        MixtureFamily
            The family with the roles of :math:`x_1^0` and :math:`x_1^1` exchanged (may be ``self``).
        """
        sw = tuple((w, f.swapped()) for w, f in self.parts)
        if all(s[1] is p[1] for s, p in zip(sw, self.parts)):
            return self
        return MixtureFamily(sw, self.label + " (swapped)")

    def law_key(self) -> tuple:
        """Rounded weights and the parts' :func:`law_key`.

        Returns
        -------
        hashable
            Equal keys mean equal GPARV laws at every ε.
        """
        return tuple((round(w, LAW_KEY_DIGITS), law_key(g)) for w, g in self.parts)


def _mix_continuous(conts):
    """Weighted sum of continuous parts (each cdf / icdf is extended correctly outside its support)."""
    if not conts:
        return None
    if len(conts) == 1 and conts[0][0] == 1.0:
        return conts[0][1]
    lo = min(c.lo for _, c in conts)
    hi = max(c.hi for _, c in conts)
    mass = sum(w * c.mass for w, c in conts)

    def cdf(s):
        s = np.asarray(s, dtype=np.float64)
        return sum(w * c.cdf(np.clip(s, c.lo, c.hi)) for w, c in conts)

    def icdf(s):
        s = np.asarray(s, dtype=np.float64)
        # \int_lo^s cdf_i = icdf_i(min(s, hi_i)) + mass_i (s - hi_i)_+   (cdf_i = 0 below lo_i)
        return sum(w * (c.icdf(np.clip(s, c.lo, c.hi)) + c.mass * np.maximum(s - c.hi, 0.0))
                   for w, c in conts)

    density = mgf = None
    breaks, poles = (), ()
    if all(c.density is not None and c.mgf is not None for _, c in conts):
        # closed forms for the exact evaluator: sums of the components' densities and MGFs, on the
        # common refinement of their analytic pieces (each piece keeps its components' poles)
        def density(s):
            s = np.asarray(s, dtype=np.float64)
            return sum(w * np.where((s >= c.lo) & (s <= c.hi), c.density(np.clip(s, c.lo, c.hi)), 0.0)
                       for w, c in conts)

        def mgf(z):
            out = [c.mgf(z) for _, c in conts]
            return (sum(w * m[0] for (w, _), m in zip(conts, out)),
                    sum(w * m[1] for (w, _), m in zip(conts, out)))

        pts = sorted({x for _, c in conts for x in (c.lo, *c.breaks, c.hi)})
        breaks = tuple(pts[1:-1])
        piece_poles = []
        for a, b in zip(pts[:-1], pts[1:]):
            mid = 0.5 * (a + b)
            ps = set()
            for _, c in conts:
                if c.lo <= mid <= c.hi:
                    cps = [c.lo, *c.breaks, c.hi]
                    j = max(i for i in range(len(cps) - 1) if cps[i] <= mid)
                    ps.update(c.poles[j] if j < len(c.poles) else ())
            piece_poles.append(tuple(sorted(ps)))
        poles = tuple(piece_poles)
    return ContinuousPart(lo, hi, mass, cdf, icdf, density, breaks, mgf, poles)


def mixture(parts: Sequence[tuple[float, Any]], label: str = ""):
    r"""Weight-mixture of decompositions / GPARV families (parallel composition, [SCW] Theorem 11).

    Parameters
    ----------
    parts : sequence of (float, GparvFamily)
        Weights (summing to one) and the components' decompositions *at a common input pair
        (or dataset)*; zero weights are dropped.
    label : str
        Label of the result.

    Returns
    -------
    Decomposition or MixtureFamily
        If every part is a :class:`Decomposition`, the decomposition with components
        :math:`(w_i a^{(i)}, w_i b^{(i)}, w_i c^{(i)})` and residual :math:`\sum_i w_i\beta_i`, merged
        by ratio; otherwise a :class:`MixtureFamily` whose GPARV is the mixture of the parts' GPARVs.
    """
    parts = [(float(w), f) for w, f in parts if w > 0]
    if all(isinstance(f, Decomposition) for _, f in parts):
        # scale c and rebuild a, b from the part's ratios, so the ratios survive tiny (denormal) weights
        c = np.concatenate([w * f.c for w, f in parts])
        a = np.concatenate([(f.a / f.c) for w, f in parts]) * c
        b = np.concatenate([(f.b / f.c) for w, f in parts]) * c
        beta = sum(w * f.beta for w, f in parts)
        if (c > 0).all():
            # merge_by_ratio drops nothing: the simplified decomposition, with its law keys
            return small_decomposition(a, b, c, beta, label=label, simplify=True)
        a, b, c = merge_by_ratio(a, b, c)
        return Decomposition(a, b, c, beta, label=label)
    return MixtureFamily(tuple(parts), label)


# ----------------------------------------------------------------------------- matrix randomizers
def primary_decomposition(P: np.ndarray, x0: int, x1: int) -> Decomposition:
    """Primary optimal (blanket) decomposition of a matrix randomizer for the pair (x0, x1).

    Parameters
    ----------
    P : ndarray of float64, shape (D, Y)
        Row-stochastic matrix, ``P[x, y] = Pr[R(x) = y]``.
    x0, x1 : int
        Row indices of the differing user's two inputs.

    Returns
    -------
    Decomposition
        ``a = P[x0]``, ``b = P[x1]``, ``c = min over rows`` ([SCW] Theorem 5); zero columns dropped.
    """
    c = P.min(axis=0)
    return Decomposition(P[x0], P[x1], c, label=f"pair ({x0}, {x1})")


def lower_decomposition(P: np.ndarray, x0: int, x1: int, x2: int) -> Decomposition:
    """Lower-bound decomposition for the dataset (x0 | x1, x2, ..., x2) ([SCW] Theorem 14).

    Parameters
    ----------
    P : ndarray of float64, shape (D, Y)
        Row-stochastic matrix.
    x0, x1 : int
        The differing user's two inputs.
    x2 : int
        The common input of the other ``n - 1`` users.

    Returns
    -------
    Decomposition
        ``a = P[x0]``, ``b = P[x1]``, ``c = P[x2]``, ``beta = 0``.
    """
    return Decomposition(P[x0], P[x1], P[x2], 0.0, label=f"dataset ({x0}|{x1}; others {x2})")


def clone_decomposition(eps0: float) -> Decomposition:
    r"""The standard clone of [FMT21] as a two-component general-clone decomposition.

    With :math:`E = e^{\varepsilon_0}`: :math:`a = (E/(E+1), 1/(E+1))`, :math:`b = (1/(E+1), E/(E+1))`,
    :math:`c = (1/(2E), 1/(2E))`, :math:`\beta = 1 - 1/E` (derived here: every other user is a clone
    of :math:`x_1^0` or :math:`x_1^1` with probability :math:`1/(2E)` each, [FMT21] Theorem 3.1, and
    the pair is binary randomized response).

    Parameters
    ----------
    eps0 : float
        Local ε0 in nats.

    Returns
    -------
    Decomposition
        Labelled ``"standard clone"``.
    """
    E = math.exp(eps0)
    return Decomposition([E / (E + 1), 1 / (E + 1)], [1 / (E + 1), E / (E + 1)],
                         [1 / (2 * E), 1 / (2 * E)], 1 - 1 / E, label="standard clone")


# ----------------------------------------------------------------------------- packed family lists
from collections.abc import Sequence as _AbcSequence  # noqa: E402  (typing.Sequence above is for annotations)


class PackedFamilies(_AbcSequence):
    """A read-only sequence of decompositions (and swaps) held as packed arrays, objects built on access.

    Batch constructors (:class:`~shuffleamp.mechanisms.MatrixMechanism`: thousands of input pairs) hold
    the merged components of ``m`` *base* decompositions in three shared arrays; entry ``e`` of the
    sequence is base ``pos[e]``, or its :meth:`Decomposition.swapped` when ``swapped[e]``.  Code that
    needs only the kernels' packed layout (:func:`pack`: Chernoff bounds, saddle-point estimates) calls
    :meth:`pack` (the same values as ``pack(list(self))``, built in one vectorised gather, not kept: callers
    cache it, e.g. ``bounds._packed``, so a cached family list holds no second copy); an entry's
    :class:`Decomposition` is built on first access (``self[e]``) and kept, so its identity is stable,
    exactly as the list ``[d0, d0.swapped(), d1, ...]`` would give it (same arrays, β, label, law keys).

    Parameters
    ----------
    a, b, c : ndarray of float64, shape (s,)
        Read-only merged component masses of the base decompositions, base after base.
    start, stop : sequences of int, length m
        Base ``p`` holds components ``start[p]:stop[p]``.
    beta : float
        The residual mass shared by every base.
    labels, keys, swap_keys : sequences of length m
        Label, :meth:`Decomposition.law_key` and swapped law key of each base.
    pos : sequence of int, optional
        Base of each entry (default: every base once, in order).
    swapped : sequence of bool, optional
        Whether each entry is its base's swap (default: none).
    """

    def __init__(self, a, b, c, start, stop, beta: float, labels, keys, swap_keys, pos=None, swapped=None):
        self.a, self.b, self.c, self.start, self.stop, self.beta = a, b, c, start, stop, float(beta)
        self.labels, self.keys, self.swap_keys = labels, keys, swap_keys
        self.pos = list(range(len(keys))) if pos is None else list(pos)
        self.swapped = [False] * len(self.pos) if swapped is None else list(swapped)
        self._objs = [None] * len(self.pos)
        self._bases = {}

    def with_entries(self, pos, swapped) -> "PackedFamilies":
        """The same bases with other entries (base indices ``pos``, swap flags ``swapped``)."""
        return PackedFamilies(self.a, self.b, self.c, self.start, self.stop, self.beta, self.labels, self.keys,
                              self.swap_keys, pos, swapped)

    def __len__(self) -> int:
        return len(self.pos)

    def _base(self, p: int) -> "Decomposition":
        d = self._bases.get(p)
        if d is None:
            s0, s1 = self.start[p], self.stop[p]
            d = Decomposition._trusted(self.a[s0:s1], self.b[s0:s1], self.c[s0:s1], self.beta,
                                       label=self.labels[p], key=self.keys[p], swap_key=self.swap_keys[p],
                                       share=True)
            d = self._bases.setdefault(p, d)
        return d

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = range(len(self))[i]                 # IndexError / negative indices as a list
        d = self._objs[i]
        if d is None:
            base = self._base(self.pos[i])
            d = base.swapped() if self.swapped[i] else base
            self._objs[i] = d
        return d

    @property
    def max_atoms(self) -> int:
        """The largest number of components of an entry."""
        lens = np.asarray(self.stop, dtype=np.intp) - np.asarray(self.start, dtype=np.intp)
        return int(np.max(lens[np.asarray(self.pos, dtype=np.intp)], initial=0))

    def pack(self) -> tuple:
        """``pack(list(self))`` (read-only arrays, the same values), built without the entries' objects.

        Returns
        -------
        (a, b, c, beta, off)
            As :func:`pack`.
        """
        start = np.asarray(self.start, dtype=np.intp)
        pos = np.asarray(self.pos, dtype=np.intp)
        sw = np.asarray(self.swapped, dtype=bool)
        lens = (np.asarray(self.stop, dtype=np.intp) - start)[pos]
        off = np.zeros(pos.size + 1, dtype=np.intp)
        off[1:] = np.cumsum(lens)
        # component index of every packed atom: start[pos[e]] + (0 .. lens[e] - 1)
        idx = np.arange(int(off[-1]), dtype=np.intp) + np.repeat(start[pos] - off[:-1], lens)
        swa = np.repeat(sw, lens)
        a, b = self.a[idx], self.b[idx]
        p = (np.where(swa, b, a), np.where(swa, a, b), self.c[idx], np.full(pos.size, self.beta), off)
        for x in p:
            x.setflags(write=False)
        return p
