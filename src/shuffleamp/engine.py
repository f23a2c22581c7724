r"""Sound FFT evaluation of :math:`\delta = \tfrac1n E[(G_1+\dots+G_n)_+]` (seed000 Algorithm 7, reworked).

What is computed
----------------
The GPARV :math:`G` is discretised onto :math:`l\mathbb{Z}` (:meth:`Gparv.discretize`):
mean-preserving *spread* or *ceil* for upper bounds, *floor* for lower bounds.  For the
discretised sum :math:`\bar S = \sum_i \bar G_i` (an integer multiple of ``l``),

.. math::

    E[\bar S_+] = l\, e^{n \bar K(\eta)} \sum_{j \ge 1} j e^{-\eta j}\, Q(j),

where :math:`\bar K` is the log-MGF of :math:`\bar G/l`, :math:`\eta > 0` an exponential
tilt (chosen at the saddle point of :math:`n\bar K(\eta) - 2\log\eta`) and :math:`Q` the
pmf of :math:`\bar S/l` under the tilted law.  :math:`Q` is centred and has width
:math:`O(\sqrt n)` grid points, so it is recovered on a window of ``N`` points by one
inverse real FFT of the exactly computed tilted characteristic function (no n-fold
PMF on a grid of size :math:`n\cdot\mathrm{range}/l` is ever built); tails near
:math:`10^{-12}` are not lost because they are evaluated relative to the tilt.

Certification
-------------
* Aliasing of the periodic inverse adds non-negative mass, so it can only raise the
  upper bound; for the lower bound the aliased mass is bounded by Chernoff bounds on
  the tilted law and subtracted.
* Mass of :math:`\bar S` beyond the window is bounded by a Chernoff bound and added
  (upper) or simply omitted (lower, since all dropped terms are non-negative).
* Floating-point error of the characteristic function, its n-th power and the inverse
  FFT is bounded by a running worst-case estimate and added / subtracted.
* Hence ``upper`` is a certified upper bound on the optimal :math:`\delta^*(\varepsilon)` for the
  given GPARV and ``lower`` (floor mode) a certified lower bound, up to IEEE rounding in
  the discretisation itself (relative effects of order 1e-15).
* The grid step ``l`` is chosen from the requested relative accuracy ``rtol`` by a
  saddle-point *estimate* of the discretisation bias (spread: :math:`n l^2\theta^2/8`;
  ceil/floor: :math:`n l\theta/2`); the achieved accuracy is therefore an estimate,
  while the direction of the error is certified.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, asdict

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import logsumexp

from . import fft_backend
from ._ext import kernels
from .errors import ResourceLimitError
from .gparv import Gparv

DBL_EPS = float(np.finfo(np.float64).eps)
#: Default cap on the FFT length (about 1.6 GB of working memory at 2**25).
DEFAULT_MAX_GRID = 2**25
#: Number of tilted standard deviations covered by the first window.
WINDOW_SIGMAS = 12.0


@dataclass(frozen=True)
class Evaluation:
    """Result of one δ evaluation for one GPARV.

    Attributes
    ----------
    delta : float
        Certified bound (upper in modes spread/ceil, lower in mode floor).
    mode : str
        Discretisation mode.
    l : float
        Grid step used (units of G).
    N : int
        FFT length used (0 if no FFT was needed).
    eta : float
        Tilt (per grid unit).
    window : tuple of int
        First and last grid index of the window.
    charged : float
        Tail + aliasing + round-off terms charged (added for upper, subtracted for lower), in δ units.
    grid_capped : bool
        True if ``max_grid`` forced a coarser grid than ``rtol`` asked for.
    """

    delta: float
    mode: str
    l: float
    N: int
    eta: float
    window: tuple
    charged: float
    grid_capped: bool

    def as_dict(self) -> dict:
        d = asdict(self)
        d["window"] = list(self.window)
        return d


class _LogMgf:
    """log E[exp(t X)] for a finite atomic law (X = idx or values) and its first two derivatives."""

    def __init__(self, x: np.ndarray, w: np.ndarray):
        self.x = np.asarray(x, dtype=np.float64)
        self.lw = np.log(w)

    def __call__(self, t: float) -> float:
        return float(logsumexp(self.lw + t * self.x))

    def moments(self, t: float):
        z = self.lw + t * self.x
        z = z - z.max()
        p = np.exp(z)
        p /= p.sum()
        m1 = float(np.dot(p, self.x))
        m2 = float(np.dot(p, (self.x - m1) ** 2))
        return m1, m2

    def tilted(self, t: float) -> np.ndarray:
        z = self.lw + t * self.x
        return np.exp(z - logsumexp(z))


def _saddle(K: _LogMgf, n: float) -> float:
    """Root of n K'(t) = 2/t on t > 0 (K' increasing, -2/t increasing: unique root)."""
    def h(t):
        return n * K.moments(t)[0] - 2.0 / t

    lo, hi = 1e-12, 1.0
    scale = max(1e-300, float(np.max(np.abs(K.x))))
    hi = 1.0 / scale
    k = 0
    while h(hi) < 0:
        hi *= 4.0
        k += 1
        if k > 400:
            raise ArithmeticError("saddle point search failed")
    while h(lo) > 0:
        lo /= 4.0
    return brentq(h, lo, hi, xtol=1e-14 * hi, rtol=1e-12, maxiter=200)


def _chernoff_log(K: _LogMgf, n: float, eta: float, thresh: float, upper_tail: bool, sd: float) -> float:
    """log of a Chernoff bound on Q(Sbar >= thresh) (upper_tail) or Q(Sbar <= thresh) under the tilt eta."""
    Keta = K(eta)
    sgn = 1.0 if upper_tail else -1.0

    def f(z):
        return n * (K(eta + sgn * z) - Keta) - sgn * z * thresh

    zmax = 50.0 / max(sd, 1e-12) + 10.0 * abs(eta) + 1.0
    res = minimize_scalar(f, bounds=(0.0, zmax), method="bounded", options={"xatol": 1e-10 * zmax})
    return float(min(0.0, res.fun, f(zmax)))


def _choose_l(gparv: Gparv, n: int, mode: str, rtol: float) -> tuple[float, float]:
    """Heuristic grid step from a saddle-point estimate of the discretisation bias."""
    v, p = gparv.approx_atoms()
    keep = p > 0
    v, p = v[keep], p[keep]
    K = _LogMgf(v, p)
    theta = _saddle(K, n)
    vmin, vmax = float(v.min()), float(v.max())
    width = max(vmax - vmin, 1e-300)
    if mode == "spread":
        l = math.sqrt(8.0 * rtol / n) / theta
    else:
        l = 2.0 * rtol / (theta * n)
    # at least 16 cells across the support of one G, so that small-n answers are resolved
    l = min(l, width / 16.0)
    return l, theta


def delta_fft(gparv: Gparv, n: int, mode: str = "spread", rtol: float = 1e-3,
              max_grid: int = DEFAULT_MAX_GRID, l: float | None = None) -> Evaluation:
    """Certified (1/n) E[(G_1+...+G_n)_+] for one GPARV by the tilted, windowed FFT.

    Parameters
    ----------
    gparv : Gparv
        Law of G.
    n : int
        Number of i.i.d. copies (users), >= 1.
    mode : {"spread", "ceil", "floor"}
        "spread" (default) and "ceil" return certified upper bounds, "floor" a certified lower bound.
    rtol : float
        Requested relative accuracy of δ (drives the grid step; an estimate, see module docstring).
    max_grid : int
        Largest FFT length allowed; a coarser grid is used (and flagged) if ``rtol`` needs more.
    l : float, optional
        Force the grid step (overrides ``rtol``).

    Returns
    -------
    Evaluation
    """
    vmin, vmax = gparv.support
    if vmax <= 0.0:
        return Evaluation(0.0, mode, 0.0, 0, 0.0, (0, 0), 0.0, False)
    capped = False
    forced = l is not None
    if l is None:
        l, _ = _choose_l(gparv, n, mode, rtol)
    W = WINDOW_SIGMAS
    for _attempt in range(60):
        idx, w = gparv.discretize(l, mode)
        if idx.size == 0 or idx.max() <= 0:
            return Evaluation(0.0, mode, l, 0, 0.0, (0, 0), 0.0, capped)
        K = _LogMgf(idx, w)
        eta = _saddle(K, n)
        m1, v1 = K.moments(eta)
        sd = math.sqrt(max(n * v1, 1e-300))
        c = n * m1
        j_lo = min(1, int(math.floor(c - W * sd)))
        j_hi = max(int(math.ceil(c + W * sd)), int(math.ceil(3.0 / eta)), 2)
        j_hi = min(j_hi, int(n * idx.max()))
        j_lo = max(j_lo, int(n * idx.min()))
        span = j_hi - j_lo + 1
        N = fft_backend.next_fast_len(max(span, 16))
        if N > max_grid:
            if forced:
                raise ResourceLimitError(f"grid step l={l!r} needs an FFT of length {N} > max_grid={max_grid}")
            capped = True
            l *= 1.25 * N / max_grid
            continue
        ev = _evaluate_window(K, idx, w, n, l, eta, j_lo, N, sd, mode)
        total, charged = ev
        main = total if mode != "floor" else total + charged
        if charged <= 1e-3 * rtol * max(main, 1e-300) or W >= 40 or main == 0.0:
            return Evaluation(max(total, 0.0), mode, l, N, eta, (j_lo, j_lo + N - 1), charged, capped)
        W *= 1.5
    raise ResourceLimitError("could not fit the FFT window within max_grid; increase max_grid or rtol")


def _evaluate_window(K: _LogMgf, idx, w, n, l, eta, j_lo, N, sd, mode):
    """One tilted FFT on the window [j_lo, j_lo + N); returns (bound, charged terms) in δ units."""
    wt = K.tilted(eta)
    n_f = float(n)
    if idx.size * (N // 2 + 1) <= 2e8:
        X, err_sum = kernels.tilted_cf_power(np.ascontiguousarray(idx, dtype=np.int64),
                                             np.ascontiguousarray(wt), int(N), n_f, int(j_lo))
    else:
        folded = np.bincount(np.mod(idx, N), weights=wt, minlength=N).astype(np.float64)
        X = fft_backend.rfft(folded, N)
        err_sum = kernels.cf_power_inplace(X, int(N), n_f, int(j_lo), 5.0 * math.log2(N) + 4.0)
    absX = float(np.abs(X).sum() * 2.0)
    q = fft_backend.irfft(X, N)
    err_q = err_sum / N + 5.0 * DBL_EPS * math.log2(N) * (absX / N + float(np.max(np.abs(q))))
    s_pos, s_raw, s_f, _ = kernels.positive_part_sums(q, int(j_lo), float(eta))
    j_hi = j_lo + N - 1
    log_scale = n_f * K(eta) + math.log(l) - math.log(n_f)
    if mode == "floor":
        log_alias_hi = _chernoff_log(K, n_f, eta, j_hi + 1, True, sd)
        log_alias_lo = _chernoff_log(K, n_f, eta, j_lo - 1, False, sd) if j_lo > n * idx.min() else -np.inf
        alias = math.exp(log_alias_hi) + (math.exp(log_alias_lo) if np.isfinite(log_alias_lo) else 0.0)
        charged_in = err_q * s_f + alias / (math.e * eta)
        body = s_raw - charged_in
        val = math.exp(log_scale) * max(body, 0.0) if body > 0 else 0.0
        return val, math.exp(log_scale) * charged_in
    # upper: aliasing only adds non-negative mass; add the tail beyond the window and round-off
    x1 = j_hi + 1
    fmax = x1 * math.exp(-eta * x1) if x1 >= 1.0 / eta else 1.0 / (math.e * eta)
    tail = fmax * math.exp(_chernoff_log(K, n_f, eta, x1, True, sd)) if x1 <= n * idx.max() else 0.0
    charged_in = err_q * s_f + tail
    val = math.exp(log_scale) * (s_pos + charged_in)
    return val, math.exp(log_scale) * charged_in
