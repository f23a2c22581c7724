r"""Laws of generalized privacy amplification random variables (GPARVs) and their discretisation.

A GPARV ([SCW] Definition 9) is a real random variable :math:`G` with :math:`E[G] = 1 - e^\varepsilon`
whose i.i.d. sums give the hockey-stick divergence of the shuffled pair ([SCW] Theorem 12).
:class:`Gparv` holds its law (finitely many atoms plus an optional :class:`ContinuousPart`); the map
from a decomposition to its GPARV lives in :mod:`shuffleamp.decomposition`.  This module also
holds the directed discretisation of :math:`G` onto a grid :math:`l\mathbb{Z}` used by the
numerical evaluators.

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
    Round down (:math:`\bar G \le G` pointwise): certified **lower** rounding ([SCW] Theorem 14
    lower bounds).

References
----------
.. [SCW] J. Su, Y. Cheng, T. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification
   via Shuffling", IEEE S&P 2026; short version "A Unified Framework and Efficient Computation for
   Privacy Amplification via Shuffling", arXiv:2504.07414.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import _validate
from .errors import ParameterError

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
        r"""Mass and first moment of the continuous part in each cell ``(edges[i], edges[i+1]]``.

        Uses :math:`\int_u^w s\,dF(s) = wF(w) - uF(u) - (I(w) - I(u))` with
        ``I = icdf`` the integral of the CDF.

        Parameters
        ----------
        edges : numpy.ndarray of float64, shape (M + 1,)
            Increasing cell edges, in the units of the GPARV; clipped to ``[lo, hi]``.

        Returns
        -------
        mass : numpy.ndarray of float64, shape (M,)
            Mass of each cell (clamped at 0 against rounding).
        moment : numpy.ndarray of float64, shape (M,)
            :math:`\int s\,dF(s)` over each cell.
        """
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

        Parameters
        ----------
        cells : int, default 2048
            Number of equal-width cells the continuous part is binned into.

        Returns
        -------
        values : numpy.ndarray of float64, shape (K,)
            Atom locations (the exact atoms, then the non-empty cell means).
        probs : numpy.ndarray of float64, shape (K,)
            Their masses.
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
        r"""Approximate mean of the law (via :meth:`approx_atoms`; heuristics only).

        Returns
        -------
        float
            :math:`\sum_j v_j p_j` over the approximating atoms.
        """
        v, p = self.approx_atoms()
        return float(np.dot(v, p))

    def same_law(self, other: "Gparv", rtol: float = 1e-12) -> bool:
        """True if both are purely atomic with the same atoms (used to deduplicate pairs).

        A law with a continuous part is only the same as itself (identity).

        Parameters
        ----------
        other : Gparv
            The law to compare with.
        rtol : float, default 1e-12
            Relative tolerance on atoms and masses (absolute tolerance 1e-15).

        Returns
        -------
        bool
        """
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
