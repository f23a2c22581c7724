r"""General-clone decompositions and generalized privacy amplification random variables (GPARVs).

This module is the single source of truth for the map

.. math::

    (a, b, c, \beta) \;\longmapsto\; G_\varepsilon = \frac{a_j - e^{\varepsilon} b_j}{c_j}
    \text{ w.p. } c_j, \qquad 0 \text{ w.p. } \beta

(seed000 digest §3, Theorem 12 and Def 9) and for the directed discretisation of
:math:`G` onto a grid :math:`l\mathbb{Z}` used by the numerical evaluators.

Discretisation modes (all in :meth:`Gparv.discretize`):

``"spread"``
    Mean-preserving spread onto the two neighbouring grid points.  The result
    :math:`\bar G` dominates :math:`G` in convex order, hence (sums of independent
    copies preserve convex order and :math:`s \mapsto s_+` is convex)
    :math:`E[(\sum \bar G_i)_+] \ge E[(\sum G_i)_+]`: a **certified upper** bound whose
    bias is second order, about :math:`n l^2 f_S(0)/8`, instead of the first-order
    :math:`n l` drift of rounding up.  Default for upper bounds.
``"ceil"``
    Round up (:math:`\bar G \ge G` pointwise): the paper's Algorithm 7 upper rounding.
``"floor"``
    Round down (:math:`\bar G \le G` pointwise): certified **lower** rounding (§5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import _validate
from .errors import NotLDPError, ParameterError

#: Masses below this are treated as zero when building GPARVs from decompositions.
MASS_EPS = 0.0


@dataclass(frozen=True)
class ContinuousPart:
    """Absolutely continuous part of a GPARV on ``[lo, hi]``.

    Attributes
    ----------
    lo, hi : float
        Support of the continuous part.
    mass : float
        Its total probability mass.
    cdf : callable
        ``cdf(s)`` (vectorised, float64 array in, array out): continuous mass in ``[lo, s]``;
        0 at ``lo`` and ``mass`` at ``hi``; clipped outside.
    icdf : callable
        ``icdf(s) = \\int_{lo}^{s} cdf(u) du`` (vectorised), used for exact per-cell first moments.
    density : callable, optional
        ``density(s)`` (vectorised): the continuous part's density, analytic on each piece
        between ``lo``, ``breaks`` and ``hi``.  Used by the exact evaluator's Gauss nodes.
    breaks : tuple of float
        Interior points where the density's formula changes.
    mgf : callable, optional
        ``mgf(z) -> (M, dM)`` for complex arrays ``z``: :math:`\\int e^{zs} dF(s)` and its
        derivative in closed form (exact evaluator at large frequencies).
    poles : tuple of tuples of float
        For each analytic piece (between ``lo``, ``breaks``, ``hi``), the real singularities of its
        density formula's continuation, all outside the piece (the exact evaluator grades its
        Gauss nodes towards them).
    """

    lo: float
    hi: float
    mass: float
    cdf: Callable[[np.ndarray], np.ndarray]
    icdf: Callable[[np.ndarray], np.ndarray]
    density: Callable[[np.ndarray], np.ndarray] | None = None
    breaks: tuple = ()
    mgf: Callable | None = None
    poles: tuple = ()

    def cell_mass_and_moment(self, edges: np.ndarray):
        """Mass and first moment of the continuous part in each cell ``(edges[i], edges[i+1]]``."""
        e = np.clip(edges, self.lo, self.hi)
        F = self.cdf(e)
        I = self.icdf(e)
        mass = np.diff(F)
        # \int_u^w s dF(s) = w F(w) - u F(u) - (I(w) - I(u))
        moment = np.diff(e * F) - np.diff(I)
        return np.maximum(mass, 0.0), moment


@dataclass(frozen=True)
class Gparv:
    """Law of a GPARV: finitely many atoms plus an optional continuous part.

    Parameters
    ----------
    values : ndarray of float64, shape (K,)
        Atom locations (sorted, unique after construction).
    probs : ndarray of float64, shape (K,)
        Atom masses, >= 0.
    continuous : ContinuousPart or None
        Continuous part; atoms plus continuous mass sum to one.
    """

    values: np.ndarray
    probs: np.ndarray
    continuous: ContinuousPart | None = None

    def __post_init__(self):
        v = np.asarray(self.values, dtype=np.float64).ravel()
        p = np.asarray(self.probs, dtype=np.float64).ravel()
        if v.shape != p.shape:
            raise ParameterError("probs", "values and probs must have the same length")
        if not (np.isfinite(v).all() and np.isfinite(p).all()):
            raise ParameterError("values", "GPARV atoms must be finite")
        if (p < 0).any():
            raise ParameterError("probs", "GPARV masses must be >= 0")
        keep = p > 0
        v, p = v[keep], p[keep]
        order = np.argsort(v, kind="stable")
        v, p = v[order], p[order]
        if v.size > 1:  # merge exactly equal values
            uniq, inv = np.unique(v, return_inverse=True)
            p = np.bincount(inv, weights=p, minlength=uniq.size)
            v = uniq
        total = p.sum() + (self.continuous.mass if self.continuous is not None else 0.0)
        if abs(total - 1.0) > 1e-9:
            raise ParameterError("probs", f"GPARV masses sum to {total!r}, not 1")
        v.setflags(write=False)
        p.setflags(write=False)
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "probs", p)

    # ------------------------------------------------------------------ summaries
    @property
    def support(self) -> tuple[float, float]:
        """(min, max) of the support."""
        lo = [self.values.min()] if self.values.size else []
        hi = [self.values.max()] if self.values.size else []
        if self.continuous is not None and self.continuous.mass > 0:
            lo.append(self.continuous.lo)
            hi.append(self.continuous.hi)
        return float(min(lo)), float(max(hi))

    def approx_atoms(self, cells: int = 2048) -> tuple[np.ndarray, np.ndarray]:
        """Atoms approximating the law (continuous part binned at cell means).

        Used only for heuristics (grid and tilt selection), never for certified numbers.
        """
        if self.continuous is None or self.continuous.mass <= 0:
            return self.values, self.probs
        c = self.continuous
        edges = np.linspace(c.lo, c.hi, cells + 1)
        m, mom = c.cell_mass_and_moment(edges)
        ok = m > 0
        centers = np.where(ok, mom / np.where(ok, m, 1.0), 0.5 * (edges[:-1] + edges[1:]))
        return np.concatenate([self.values, centers[ok]]), np.concatenate([self.probs, m[ok]])

    def mean(self) -> float:
        v, p = self.approx_atoms()
        return float(np.dot(v, p))

    def same_law(self, other: "Gparv", rtol: float = 1e-12) -> bool:
        """True if both are purely atomic with the same atoms (used to deduplicate pairs)."""
        if self.continuous is not None or other.continuous is not None:
            return self is other
        return (self.values.shape == other.values.shape
                and np.allclose(self.values, other.values, rtol=rtol, atol=1e-15)
                and np.allclose(self.probs, other.probs, rtol=rtol, atol=1e-15))

    # ------------------------------------------------------------------ discretisation
    def discretize(self, l: float, mode: str):
        """Directed discretisation onto the grid ``l * Z``.

        Parameters
        ----------
        l : float
            Grid step (> 0), in the units of G.
        mode : {"spread", "ceil", "floor"}
            See the module docstring; "spread" and "ceil" give certified upper
            bounds, "floor" a certified lower bound.

        Returns
        -------
        idx : ndarray of int64, shape (M,)
            Sorted grid indices (value = idx * l).
        w : ndarray of float64, shape (M,)
            Masses (sum to one).
        """
        from ._ext import kernels

        _validate.choice(mode, "mode", {"spread", "ceil", "floor"})
        idx, w = kernels.discretize_atoms(self.values, self.probs, float(l), mode)
        if self.continuous is not None and self.continuous.mass > 0:
            c = self.continuous
            i_lo = math.floor(c.lo / l) - 1
            i_hi = math.ceil(c.hi / l) + 1
            edges = np.arange(i_lo, i_hi + 1, dtype=np.float64) * l   # cell k = (edges[k], edges[k+1]]
            m, mom = c.cell_mass_and_moment(edges)
            cidx, cw = kernels.discretize_cells(m, mom, edges, float(l), i_lo, mode)
            idx = np.concatenate([idx, cidx])
            w = np.concatenate([w, cw])
        uniq, inv = np.unique(idx, return_inverse=True)
        w = np.bincount(inv.ravel(), weights=w, minlength=uniq.size)
        idx = uniq
        keep = w > 0
        return idx[keep].astype(np.int64), w[keep]


@dataclass(frozen=True)
class Decomposition:
    r"""A general-clone decomposition (seed000 digest Def 7) of a randomizer for one input pair.

    .. math::

        R(x_1^0) = \sum_j a_j Q_j,\quad R(x_1^1) = \sum_j b_j Q_j,\quad
        R(x_i) = \sum_j c_j Q_j + \beta\, LO(x_i).

    With ``c = inf_x R(x)(y)`` this is the blanket (primary optimal) decomposition
    (Theorem 5); with components merged by ratio it is the simplified form (Theorem 7).
    A Theorem-14 lower-bound decomposition has ``c = R(x_2)`` and ``beta = 0``.

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
        If masses are negative, do not sum to one, or some component has
        ``c_j = 0`` while ``a_j + b_j > 0`` (absolute continuity, Theorem 12).
    """

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    beta: float | None = None
    label: str = ""

    def __post_init__(self):
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
        for arr in (a, b, c):
            arr.setflags(write=False)
        object.__setattr__(self, "a", a[keep])
        object.__setattr__(self, "b", b[keep])
        object.__setattr__(self, "c", c[keep])
        object.__setattr__(self, "beta", beta)

    @property
    def gamma(self) -> float:
        """Blanket mass γ = Σ c_j (total variation similarity for the blanket decomposition)."""
        return float(self.c.sum())

    @property
    def ratios(self) -> tuple[np.ndarray, np.ndarray]:
        """(r0, r1) = (a/c, b/c) per component (seed000 Theorem 7)."""
        return self.a / self.c, self.b / self.c

    def law_key(self, digits: int = 12) -> tuple:
        """Hashable key equal for two decompositions iff their GPARVs have the same law at every ε."""
        s = self.simplified()
        r0, r1 = s.ratios
        rows = sorted(zip(np.round(r0, digits), np.round(r1, digits), np.round(s.c, digits)))
        return tuple(rows) + (round(s.beta, digits),)

    def swapped(self) -> "Decomposition":
        """The decomposition for the reversed pair (x_1^1, x_1^0)."""
        return Decomposition(self.b, self.a, self.c, self.beta, label=self.label + " (swapped)")

    def simplified(self, rtol: float = 1e-10) -> "Decomposition":
        """Merge components with equal ratios (a_j/c_j, b_j/c_j) (Theorem 7, Algorithm 6).

        Ratios are compared after rounding to ``rtol`` relative precision.
        """
        r0, r1 = self.ratios
        key0 = np.round(np.log(r0 + 1e-300) / rtol).astype(np.int64)
        key1 = np.round(np.log(r1 + 1e-300) / rtol).astype(np.int64)
        keys = np.stack([key0, key1], axis=1)
        uniq, inv = np.unique(keys, axis=0, return_inverse=True)
        inv = inv.ravel()
        k = uniq.shape[0]
        return Decomposition(np.bincount(inv, self.a, k), np.bincount(inv, self.b, k),
                             np.bincount(inv, self.c, k), self.beta, label=self.label)

    def gparv(self, epsilon: float) -> Gparv:
        """The GPARV G_ε of this decomposition (Theorem 12): atoms (a_j − e^ε b_j)/c_j w.p. c_j, 0 w.p. β."""
        e = math.exp(float(epsilon))
        vals = (self.a - e * self.b) / self.c
        return Gparv(np.append(vals, 0.0), np.append(self.c, self.beta))

    @classmethod
    def from_pqr(cls, eps0: float, p: float, q: float, r: float, label: str = "") -> "Decomposition":
        """Five-component form of extreme-property mechanisms (seed000 digest §6.1).

        Components (E,1), (1,E), (E,E), (1,1) with blanket masses p, p, q, r and residual
        1 − 2p − q − r; ``E = e^{eps0}``.
        """
        E = math.exp(eps0)
        c = np.array([p, p, q, r])
        a = np.array([E * p, p, E * q, r])
        b = np.array([p, E * p, E * q, r])
        # renormalise away float noise in the closed forms (sums are exactly 1 analytically)
        return cls(a / a.sum(), b / b.sum(), c, 1.0 - c.sum(), label=label)


def primary_decomposition(P: np.ndarray, x0: int, x1: int) -> Decomposition:
    """Primary optimal (blanket) decomposition of a matrix randomizer for the pair (x0, x1).

    Parameters
    ----------
    P : ndarray of float64, shape (D, Y)
        Row-stochastic matrix, P[x, y] = Pr[R(x) = y].
    x0, x1 : int
        Row indices of the differing user's two inputs.

    Returns
    -------
    Decomposition
        a = P[x0], b = P[x1], c = min over rows (seed000 Theorem 5); zero columns dropped.
    """
    c = P.min(axis=0)
    return Decomposition(P[x0], P[x1], c, label=f"pair ({x0}, {x1})")


def lower_decomposition(P: np.ndarray, x0: int, x1: int, x2: int) -> Decomposition:
    """Theorem-14 decomposition for the dataset (x0 | x1, x2, ..., x2): a = P[x0], b = P[x1], c = P[x2], β = 0."""
    return Decomposition(P[x0], P[x1], P[x2], 0.0, label=f"dataset ({x0}|{x1}; others {x2})")


# ---------------------------------------------------------------------- Laplace (digest §6.6)
def inv_sqrt_mgf(c, a: float, b: float):
    r"""Closed forms :math:`I = \int_a^b e^{cw} w^{-3/2} dw` and :math:`J = \int_a^b e^{cw} w^{-1/2} dw`.

    With :math:`k = \sqrt{-c}` (principal) and the Faddeeva function :math:`w` (``scipy.special.wofz``,
    :math:`\operatorname{erfc}(\zeta) = e^{-\zeta^2} w(i\zeta)`, bounded since
    :math:`\operatorname{Im}(ik\sqrt a) \ge 0`):
    :math:`J = \tfrac{\sqrt\pi}{k}[e^{ca}w(ik\sqrt a) - e^{cb}w(ik\sqrt b)]` and, integrating by parts,
    :math:`I = 2e^{ca}/\sqrt a - 2e^{cb}/\sqrt b - 2k^2 J`.  ``c`` is a complex array, ``c != 0``.
    """
    from scipy.special import wofz

    c = np.asarray(c, dtype=np.complex128)
    k = np.sqrt(-c)
    sa, sb = math.sqrt(a), math.sqrt(b)
    ea, eb = np.exp(c * a), np.exp(c * b)
    diff = ea * wofz(1j * k * sa) - eb * wofz(1j * k * sb)
    J = math.sqrt(math.pi) / k * diff
    I = 2.0 * ea / sa - 2.0 * eb / sb - 2.0 * math.sqrt(math.pi) * k * diff
    return I, J



def laplace_upper_gparv(eps0: float, epsilon: float) -> Gparv:
    r"""Blanket GPARV of the Laplace mechanism on {0, 1} (seed000 digest §6.6, derived GPARV CDF).

    γ = e^{-ε0/2}; G = 0 w.p. 1 − γ; otherwise G = L/γ with end atoms of mass
    e^{-ε0/2}/2 (times γ) at :math:`1 - Ee^\varepsilon` and :math:`E - e^\varepsilon`, and
    continuous CDF :math:`\tfrac12\sqrt{e^\varepsilon/(1-s)}` on
    :math:`[1-Ee^\varepsilon, 1-e^\varepsilon)`, :math:`1 - \tfrac12 (s+e^\varepsilon)^{-1/2}` on
    :math:`[1-e^\varepsilon, E-e^\varepsilon)`.
    """
    E = math.exp(eps0)
    e = math.exp(epsilon)
    t = math.exp(-eps0 / 2)          # = gamma = end-atom size of F
    gamma = t
    lo, mid, hi = 1 - E * e, 1 - e, E - e

    def F(s):  # CDF of L/gamma including its atoms (right-continuous), valid on [lo, hi)
        s = np.asarray(s, dtype=np.float64)
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
        I1, J1 = inv_sqrt_mgf(-z, e, E * e)
        I2, J2 = inv_sqrt_mgf(z, 1.0, E)
        c1 = gamma * 0.25 * math.sqrt(e) * np.exp(z)
        c2 = gamma * 0.25 * np.exp(-z * e)
        M = c1 * I1 + c2 * I2
        dM = c1 * (I1 - J1) + c2 * (J2 - e * I2)
        return M, dM

    cont = ContinuousPart(lo, hi, gamma * (1 - t), cdf, icdf, density, (mid,), mgf, ((1.0,), (-e,)))
    return Gparv(np.array([lo, hi, 0.0]), np.array([gamma * t / 2, gamma * t / 2, 1 - gamma]), cont)


def laplace_lower_gparv(eps0: float, epsilon: float) -> Gparv:
    r"""Theorem-14 GPARV of Laplace on {0, 1} with x_1^0 = 0, x_1^1 = x_2 = … = x_n = 1 (digest §5).

    G = r − e^ε with r = R(0)(y)/R(1)(y), y ~ R(1): atom E w.p. e^{-ε0}/2, atom e^{-ε0} w.p. 1/2,
    and Pr[r ≤ s] = 1 − e^{-ε0/2}/(2√s) on (e^{-ε0}, E).
    """
    E = math.exp(eps0)
    e = math.exp(epsilon)
    t = math.exp(-eps0 / 2)
    lo, hi = 1 / E - e, E - e

    def cdf(s):
        s = np.clip(np.asarray(s, dtype=np.float64), lo, hi)
        return np.clip(0.5 - t / (2 * np.sqrt(s + e)), 0.0, 0.5 - 0.5 / E)

    def icdf(s):
        s = np.clip(np.asarray(s, dtype=np.float64), lo, hi)
        return 0.5 * (s - lo) - t * (np.sqrt(s + e) - t)

    def density(s):
        return 0.25 * t * np.maximum(np.asarray(s, dtype=np.float64) + e, 1.0 / E) ** -1.5

    def mgf(z):
        z = np.asarray(z, dtype=np.complex128)
        I, J = inv_sqrt_mgf(z, 1.0 / E, E)      # w = s + e in [1/E, E]
        c = 0.25 * t * np.exp(-z * e)
        return c * I, c * (J - e * I)

    cont = ContinuousPart(lo, hi, 0.5 - 0.5 / E, cdf, icdf, density, (), mgf, ((-e,),))
    return Gparv(np.array([lo, hi]), np.array([0.5, 0.5 / E]), cont)


@dataclass(frozen=True)
class LaplaceFamily:
    """ε ↦ GPARV for the Laplace mechanism on {0,1}; same interface as :class:`Decomposition`."""

    eps0: float
    kind: str = "upper"   # "upper" (blanket, Theorem 13) or "lower" (Theorem 14)
    label: str = field(default="pair (0, 1)")

    def gparv(self, epsilon: float) -> Gparv:
        if self.kind == "upper":
            return laplace_upper_gparv(self.eps0, epsilon)
        return laplace_lower_gparv(self.eps0, epsilon)

    def swapped(self) -> "LaplaceFamily":
        return self  # Laplace on {0,1} is input-symmetric: reversing the pair gives the same law
