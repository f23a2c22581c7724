r"""Certified discretised evaluation of :math:`\delta = \tfrac1n E[(G_1+\dots+G_n)_+]`, and its FFT backend.

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

Both evaluation paths (inverse FFT over the window, and the spectral path summing Parseval's
identity over the frequencies that are not certifiably negligible) hand their sums to one
charging routine, :func:`_charge`, which adds or subtracts the tail, aliasing, round-off and
spread-bias terms.

FFT backend
-----------
Real FFTs go through pyFFTW with reused plans, falling back to :mod:`scipy.fft`.  The
environment variable ``SHUFFLEAMP_FFT`` forces the backend: ``fftw`` (error if pyFFTW cannot
be imported) or ``scipy``.  Default: pyFFTW when importable.  Thread counts follow the
kernels' single policy (:func:`shuffleamp._ext.kernels.num_threads`).

References
----------
Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling",
IEEE S&P 2026 (arXiv:2504.07414): the GPARV functional (Theorems 12-13) and the FFT evaluation
of the sum's law (the discretised algorithm reworked here with tilting, windows and charges).
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict

import numpy as np

from ._ext import kernels
from ._numerics import LogMgf, check_memory, check_time, check_work
from .errors import ParameterError, ResourceLimitError
from .gparv import Gparv
from .results import Evaluation, FftDetail

DBL_EPS = float(np.finfo(np.float64).eps)
#: Default cap on the FFT length (about 1.6 GB of working memory at 2**25).
DEFAULT_MAX_GRID = 2**25
#: Seconds per cell assumed when estimating the cost of discretising a continuous part (budget check).
DISCRETIZE_SECONDS = 3e-6
#: Seconds per atom x frequency of the characteristic-function kernel (budget estimate).
CF_SECONDS = 5e-9
#: Number of tilted standard deviations covered by the first window.
WINDOW_SIGMAS = 12.0
#: Shells of the spread-bias bound reach BIAS_SIGMAS Hoeffding standard deviations of the rounding noise.
BIAS_SIGMAS = 14.0
#: Calibration of the spread grid step: the bias estimate n l^2 theta^2 / 8 overstates the measured
#: bias by 5-20x (tests/test_engine.py measures it against exact sums), so l is widened by this factor.
SPREAD_L_FACTOR = 2.0


# =========================================================================== FFT backend
_PLAN_CACHE_SIZE = 4


def _load_pyfftw():
    try:
        import pyfftw  # noqa: F401
        import pyfftw.builders  # noqa: F401
    except Exception:  # pragma: no cover - depends on the machine
        return None
    return pyfftw


def backend_name() -> str:
    """Name of the FFT backend in use.

    Returns
    -------
    str
        ``"fftw"`` (pyFFTW) or ``"scipy"`` (:mod:`scipy.fft`).

    Raises
    ------
    ParameterError
        The environment variable ``SHUFFLEAMP_FFT`` is set to something other than ``fftw`` or
        ``scipy``, or to ``fftw`` while pyFFTW cannot be imported.
    """
    choice = os.environ.get("SHUFFLEAMP_FFT", "").strip().lower()
    if choice not in ("", "fftw", "scipy"):
        raise ParameterError("SHUFFLEAMP_FFT", f"must be 'fftw' or 'scipy', got {choice!r}")
    if choice == "scipy":
        return "scipy"
    if _load_pyfftw() is not None:
        return "fftw"
    if choice == "fftw":
        raise ParameterError("SHUFFLEAMP_FFT", "is 'fftw' but pyfftw cannot be imported")
    return "scipy"


def _threads(N: int) -> int:
    return int(kernels.num_threads(float(N)))


class _PlanCache:
    """pyFFTW plans by (kind, length, threads).  A plan owns its input and output arrays, so filling and
    executing it is guarded by :attr:`lock` (held by :func:`irfft` / :func:`rfft` around get, fill, execute
    and copy): safe under concurrent calls."""

    def __init__(self):
        self._plans: OrderedDict = OrderedDict()
        self.lock = threading.RLock()

    def get(self, kind: str, N: int):
        key = (kind, N, _threads(N))
        plan = self._plans.get(key)
        if plan is not None:
            self._plans.move_to_end(key)
            return plan
        import pyfftw
        import pyfftw.builders

        if kind == "irfft":
            inp = pyfftw.empty_aligned(N // 2 + 1, dtype="complex128")
            plan = pyfftw.builders.irfft(inp, n=N, threads=_threads(N), planner_effort="FFTW_ESTIMATE",
                                         avoid_copy=False, overwrite_input=True)
        else:
            inp = pyfftw.empty_aligned(N, dtype="float64")
            plan = pyfftw.builders.rfft(inp, n=N, threads=_threads(N), planner_effort="FFTW_ESTIMATE",
                                        avoid_copy=False)
        self._plans[key] = plan
        while len(self._plans) > _PLAN_CACHE_SIZE:
            self._plans.popitem(last=False)
        return plan


_CACHE = _PlanCache()


def irfft(X: np.ndarray, N: int) -> np.ndarray:
    """Inverse real FFT of length ``N`` (numpy normalisation: 1/N on the inverse).

    Parameters
    ----------
    X : ndarray of complex128, shape (N // 2 + 1,)
        Half spectrum.
    N : int
        Transform length.

    Returns
    -------
    ndarray of float64, shape (N,)
    """
    if backend_name() == "fftw":
        with _CACHE.lock:
            plan = _CACHE.get("irfft", N)
            plan.input_array[:] = X
            return plan().copy()
    import scipy.fft

    return scipy.fft.irfft(X, n=N, workers=_threads(N))


def rfft(x: np.ndarray, N: int) -> np.ndarray:
    """Forward real FFT of length ``N``.

    Parameters
    ----------
    x : ndarray of float64, shape (N,)
        Input, zero-padded or folded to length ``N`` by the caller.
    N : int
        Transform length.

    Returns
    -------
    ndarray of complex128, shape (N // 2 + 1,)
    """
    if backend_name() == "fftw":
        with _CACHE.lock:
            plan = _CACHE.get("rfft", N)
            plan.input_array[:] = x
            return plan().copy()
    import scipy.fft

    return scipy.fft.rfft(x, n=N, workers=_threads(N))


def next_fast_len(N: int) -> int:
    """A length >= ``N`` that both backends transform fast (5-smooth).

    Parameters
    ----------
    N : int
        Minimal length.

    Returns
    -------
    int
    """
    import scipy.fft

    return int(scipy.fft.next_fast_len(int(N), real=True))


# =========================================================================== certified evaluation

def _chernoff_log(K: LogMgf, n: float, eta: float, thresh: float, upper_tail: bool, sd: float) -> float:
    """log of a Chernoff bound on Q(Sbar >= thresh) (upper_tail) or Q(Sbar <= thresh) under the tilt eta."""
    Keta = K(eta)
    sgn = 1.0 if upper_tail else -1.0

    def f(z):
        return n * (K(eta + sgn * z) - Keta) - sgn * z * thresh

    zmax = 50.0 / max(sd, 1e-12) + 10.0 * abs(eta) + 1.0
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(f, bounds=(0.0, zmax), method="bounded", options={"xatol": 1e-10 * zmax})
    return float(min(0.0, res.fun, f(zmax)))


def _tilted_mass_outside(K: LogMgf, n: float, eta: float, j_lo: int, j_hi: int, sd: float, idx) -> float:
    """Chernoff bound on the tilted mass of Sbar/l outside the window [j_lo, j_hi] (what aliasing can add)."""
    hi = math.exp(_chernoff_log(K, n, eta, j_hi + 1, True, sd))
    lo = math.exp(_chernoff_log(K, n, eta, j_lo - 1, False, sd)) if j_lo > int(n) * int(idx.min()) else 0.0
    return hi + lo


def _upper_tail(K: LogMgf, n: float, eta: float, j_hi: int, sd: float, idx) -> float:
    """Bound on sum_{j > j_hi} j e^{-eta j} Q(j): max of x e^{-eta x} beyond j_hi times a Chernoff tail."""
    x1 = j_hi + 1
    if x1 > int(n) * int(idx.max()):
        return 0.0
    fmax = x1 * math.exp(-eta * x1) if x1 >= 1.0 / eta else 1.0 / (math.e * eta)
    return fmax * math.exp(_chernoff_log(K, n, eta, x1, True, sd))


def _choose_l(gparv: Gparv, n: int, mode: str, rtol: float) -> tuple[float, float]:
    """Heuristic grid step from a saddle-point estimate of the discretisation bias."""
    v, p = gparv.approx_atoms()
    keep = p > 0
    v, p = v[keep], p[keep]
    theta = LogMgf(v, p).saddle(n)[0]
    vmin, vmax = float(v.min()), float(v.max())
    width = max(vmax - vmin, 1e-300)
    if mode == "spread":
        l = SPREAD_L_FACTOR * math.sqrt(8.0 * rtol / n) / theta
    else:
        l = 2.0 * rtol / (theta * n)
    # at least 16 cells across the support of one G, so that small-n answers are resolved ...
    l = min(l, width / 16.0)
    # ... and at most MAX_CELLS_PER_G: a tiny positive atom (eps near eps0, or a 1e-16 rounding
    # residue at eps = eps0) would otherwise drive the saddle heuristic to l ~ 1e-17 and overflow the
    # grid indices.  Any l is sound; this only bounds the cost.
    l = max(l, width / MAX_CELLS_PER_G)
    return l, theta


#: Largest virtual window of the spectral evaluator (no array of this size is ever built).
SPECTRAL_MAX_SPAN = 2**30
#: Lipschitz slack per coarse frequency cell when pruning (``|phi|`` may grow by at most this in a cell).
PRUNE_SLACK = 0.05
#: Kept frequency cells are split this many ways and re-certified.
REFINE = 16
#: A frequency cell is skipped when the n-th power of its ``|phi|`` bound is below this.
PRUNE_NEGLIGIBLE = 1e-30
#: Finest grid relative to the support width of one G (keeps grid indices far from int64 limits).
MAX_CELLS_PER_G = 2.0**24
#: Grid cap of the floor evaluation that complements "spread_lower" (it wins at small n).
FLOOR_COMPANION_GRID = 2**18


def delta_fft(gparv: Gparv, n: int, mode: str = "spread", rtol: float = 1e-3,
              max_grid: int = DEFAULT_MAX_GRID, l: float | None = None, *, evaluator) -> Evaluation:
    """Certified (1/n) E[(G_1+...+G_n)_+] for one GPARV by the tilted, windowed FFT or its spectral form.

    Parameters
    ----------
    gparv : Gparv
        Law of G.
    n : int
        Number of i.i.d. copies (users), >= 1.
    mode : {"spread", "ceil", "floor", "spread_lower"}
        "spread" (default) and "ceil" return certified upper bounds; "floor" and
        "spread_lower" certified lower bounds.  "spread_lower" evaluates the spread
        discretisation and subtracts a certified bound on its (second-order) bias, see
        :func:`_spread_bias_bound`; it needs a far smaller grid than "floor" at large n.
    rtol : float
        Requested relative accuracy of δ (drives the grid step; an estimate, see module docstring).
    max_grid : int
        Largest FFT length allowed; a coarser grid is used (and flagged) if ``rtol`` needs more.
    l : float, optional
        Force the grid step (overrides ``rtol``).
    evaluator : {"spectral", "fft"} or callable
        How the certified functional of the tilted lattice law is evaluated: "spectral"
        (Parseval over the frequencies where the characteristic function power is not
        certifiably negligible; cost independent of n), "fft" (inverse FFT over the window),
        or a route ``route(atoms, N) -> int``: the spectral evaluator's frequency budget for a lattice law
        of ``atoms`` grid atoms on a window of ``N`` points (the spectral evaluator declines beyond it and the
        FFT answers), 0 for the FFT.  The selection policy's route is
        :func:`shuffleamp.evaluate.spectral_budget` (``evaluator="auto"`` of :func:`shuffleamp.evaluate.delta_fft`).

    Returns
    -------
    Evaluation
        ``delta`` (certified bound), ``charged`` (terms charged, δ units), ``evaluator``
        (``"fft"``, ``"spectral"`` or ``"none"``) and an :class:`~shuffleamp.results.FftDetail`
        (grid step, FFT length, tilt, window, whether the grid was capped); no detail when G has
        no positive atom (δ = 0).

    Raises
    ------
    ResourceLimitError
        A forced grid step ``l`` is too fine, or the window cannot be fitted within ``max_grid``.

    References
    ----------
    Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
    Shuffling", IEEE S&P 2026 (arXiv:2504.07414), Theorems 12-13 (the functional evaluated).
    """
    vmin, vmax = gparv.support
    if vmax <= 0.0:
        return Evaluation(0.0, mode, 0.0)
    if mode == "spread_lower" and l is None:
        # two certified lower bounds: spread minus its bias bound (second order, best at large n)
        # and floor rounding on a small grid (first order, best at small n); keep the larger
        a = _delta_fft(gparv, n, "spread_lower", rtol, max_grid, None, evaluator)
        try:
            b = _delta_fft(gparv, n, "floor", rtol, min(max_grid, FLOOR_COMPANION_GRID), None, evaluator)
        except ResourceLimitError:
            return a
        return a if a.delta >= b.delta else b
    return _delta_fft(gparv, n, mode, rtol, max_grid, l, evaluator)


def _coarser(l: float, span: int, cap: int, forced: bool, what: str) -> float:
    """The retry step: a grid step coarse enough for a window of ``span`` points to fit ``cap``
    (or a ResourceLimitError naming ``what`` when the step was forced)."""
    if forced:
        raise ResourceLimitError(f"grid step l={l!r}: {what}", parameter="max_grid", resource="memory")
    return l * 1.25 * span / cap


def _spectral_points(evaluator, atoms: int, N: int) -> int:
    """The spectral evaluator's frequency budget for ``evaluator`` (see :func:`delta_fft`); 0: the FFT."""
    if evaluator == "fft":
        return 0
    if evaluator == "spectral":
        return 2**62 if N < 2**31 else 0
    if callable(evaluator):
        return int(evaluator(int(atoms), int(N)))
    raise ParameterError("evaluator", f"must be 'spectral', 'fft' or a route, got {evaluator!r}")


def _delta_fft(gparv: Gparv, n: int, mode: str, rtol: float, max_grid: int, l: float | None,
               evaluator) -> Evaluation:
    vmin, vmax = gparv.support
    capped = False
    forced = l is not None
    if forced and max(abs(vmin), abs(vmax)) / l > 2.0**50:
        raise ResourceLimitError(f"grid step l={l!r} is too fine for a GPARV of range [{vmin}, {vmax}]",
                                 parameter="l", resource="memory")
    disc = "spread" if mode == "spread_lower" else mode
    if l is None:
        l, _ = _choose_l(gparv, n, disc, rtol)
    W = WINDOW_SIGMAS
    disc_cache = None
    for _attempt in range(60):
        check_time("FFT engine")
        # discretisation: up to (range / l) grid atoms for a continuous part (a few float64 arrays)
        cells = (vmax - vmin) / l if gparv.continuous is not None else gparv.values.size
        check_memory(48.0 * cells, "FFT engine (discretisation)")
        check_work(cells * DISCRETIZE_SECONDS, "FFT engine (discretisation)")
        if disc_cache is None or disc_cache[0] != l:     # a wider window on the same grid reuses it
            idx, w = gparv.discretize(l, disc)
            if idx.size == 0 or idx.max() <= 0:
                return Evaluation(0.0, mode, 0.0, "none", FftDetail(l, 0, 0.0, (0, 0), capped))
            K = LogMgf(idx, w)
            disc_cache = (l, idx, w, K, *K.saddle(n))
        _, idx, w, K, eta, m1, v1 = disc_cache
        sd = math.sqrt(max(n * v1, 1e-300))
        c = n * m1
        j_lo = min(1, int(math.floor(c - W * sd)))
        j_hi = max(int(math.ceil(c + W * sd)), int(math.ceil(3.0 / eta)), 2)
        j_hi = min(j_hi, int(n) * int(idx.max()))
        if mode == "spread_lower":   # the bias bound needs the law of Sbar on [-BIAS_SIGMAS*sigma_h, 0]
            j_lo = min(j_lo, -int(math.ceil(BIAS_SIGMAS * 0.5 * math.sqrt(n))) - 2)
        j_lo = max(j_lo, int(n) * int(idx.min()))
        span = j_hi - j_lo + 1
        cap = max_grid if evaluator == "fft" or mode == "floor" else max(max_grid, SPECTRAL_MAX_SPAN)
        if span > cap:
            l = _coarser(l, span, cap, forced, f"needs an FFT of length >= {span} > max_grid={max_grid}")
            capped = True
            continue
        N = next_fast_len(max(span, 16))
        sums = None
        points = _spectral_points(evaluator, idx.size, N)
        if points > 0:
            sums = _spectral_sums(K, idx, n, eta, j_lo, N, mode, max_points=points)
            used = "spectral"
        if sums is None:
            if span > max_grid:
                l = _coarser(l, span, max_grid, forced, f"window of {span} points exceeds max_grid={max_grid}")
                capped = True
                continue
            check_memory(64.0 * N, "FFT engine (window)")
            sums = _window_sums(K, idx, n, eta, j_lo, N, l, mode)
            used = "fft"
        total, charged, window_charge = _charge(K, idx, n, l, eta, j_lo, N, sd, mode, *sums)
        main = total if mode in ("spread", "ceil") else total + charged
        # widen the window only if its own truncation charges (tails, aliasing, round-off) matter
        if window_charge <= 1e-2 * rtol * max(main, 1e-300) or W >= 40 or main == 0.0:
            return Evaluation(max(total, 0.0), mode, charged, used,
                              FftDetail(l, N, eta, (j_lo, j_lo + N - 1), capped))
        W *= 1.5
    raise ResourceLimitError("could not fit the FFT window within max_grid; increase max_grid or rtol",
                             parameter="max_grid", resource="memory")


def _charge(K: LogMgf, idx, n, l, eta, j_lo, N, sd, mode, s_upper, s_raw, err_f, prob_abs_le):
    r"""The one certification step of both paths: charge the window's tail, aliasing, round-off and
    (``spread_lower``) spread-bias terms to the tilted sums.

    Parameters
    ----------
    s_upper : float
        Tilted sum of :math:`f(j) = j e^{-\eta j}` times the (upper) window pmf, :math:`j \ge 1`.
    s_raw : float
        The same sum with the signed window pmf (lower bounds).
    err_f : float
        Round-off bound of both sums.
    prob_abs_le : callable or None
        Small-ball bounds :math:`P(|\bar S| \le k l)` (vectorised over integer k), needed by
        ``spread_lower`` only.

    Returns
    -------
    (bound, charged, window_charge) : float
        The certified bound, all charged terms, and the window-truncation part of them (δ units).
    """
    n_f = float(n)
    j_hi = j_lo + N - 1
    scale = math.exp(n_f * K(eta) + math.log(l) - math.log(n_f))
    if mode in ("floor", "spread_lower"):
        # aliasing adds the mass outside the window: bounded by a Chernoff bound and subtracted
        alias = _tilted_mass_outside(K, n_f, eta, j_lo, j_hi, sd, idx)
        charged_in = err_f + alias / (math.e * eta)
        body = s_raw - charged_in
        charged = scale * charged_in
        window_charge = scale * alias / (math.e * eta)
        if mode == "spread_lower":
            bias = _spread_bias_bound(prob_abs_le, n_f, l)
            charged += bias / n_f
            body -= bias / (n_f * scale) if scale > 0 else np.inf
        val = scale * body if body > 0 else 0.0
        return val, charged, window_charge
    # upper: aliasing only adds non-negative mass; add the tail beyond the window and round-off
    tail = _upper_tail(K, n_f, eta, j_hi, sd, idx)
    charged_in = err_f + tail
    return scale * (s_upper + charged_in), scale * charged_in, scale * tail


def _window_sums(K: LogMgf, idx, n, eta, j_lo, N, l, mode):
    """FFT path: one tilted inverse FFT on the window [j_lo, j_lo + N); the sums for :func:`_charge`."""
    wt = K.tilted(eta)
    n_f = float(n)
    check_work(CF_SECONDS * min(idx.size * (N // 2 + 1), 2e8) + 1e-8 * N, "FFT engine (window)")
    if idx.size * (N // 2 + 1) <= 2e8:
        X, err_sum = kernels.tilted_cf_power(np.ascontiguousarray(idx, dtype=np.int64),
                                             np.ascontiguousarray(wt), int(N), n_f, int(j_lo))
    else:
        folded = np.bincount(np.mod(idx, N), weights=wt, minlength=N).astype(np.float64)
        X = rfft(folded, N)
        err_sum = kernels.cf_power_inplace(X, int(N), n_f, int(j_lo), 5.0 * math.log2(N) + 4.0)
    absX = float(np.abs(X).sum() * 2.0)
    q = irfft(X, N)
    err_q = err_sum / N + 5.0 * DBL_EPS * math.log2(N) * (absX / N + float(np.max(np.abs(q))))
    s_pos, s_raw, s_f, _ = kernels.positive_part_sums(q, int(j_lo), float(eta))
    prob = _fft_prob_abs_le(q, j_lo, n_f, l, eta, n_f * K(eta), err_q) if mode == "spread_lower" else None
    return s_pos, s_raw, err_q * s_f, prob


def _fft_prob_abs_le(q, j_lo, n, l, eta, nK, err_q):
    """Upper bounds on P(|Sbar| <= k l) from the windowed tilted pmf ``q`` (FFT path)."""
    sig = 0.5 * l * math.sqrt(n)
    J = int(math.ceil(BIAS_SIGMAS * 2.0 * sig / l)) + 1
    js = np.arange(-J, J + 1)
    m = js - j_lo
    ok = (m >= 0) & (m < q.size)
    with np.errstate(over="ignore", under="ignore"):
        logp = nK - eta * js + np.log(np.maximum(np.where(ok, q[np.clip(m, 0, q.size - 1)], 0.0), 0.0) + err_q)
        p = np.where(ok, np.exp(logp), 1.0)
    p = np.minimum(p, 1.0)
    sym = np.empty(J + 1)
    sym[0] = p[J]
    sym[1:] = p[J + 1:] + p[J - 1::-1][:J]
    C = np.minimum(np.cumsum(sym), 1.0)        # C[k] bounds P(|Sbar| <= k l)
    return lambda k: C[np.clip(k, 0, J)]


def _spread_bias_bound(prob_abs_le, n, l) -> float:
    r"""Certified bound on :math:`E[\bar S_+] - E[S_+]` for the spread discretisation.

    With :math:`\bar S = S + \Xi`, :math:`\Xi = \sum \xi_i`, the :math:`\xi_i` independent
    given the :math:`G_i`, conditionally mean zero and of range ``l``:

    * :math:`(s+x)_+ - s_+ - x 1\{s>0\} \le |x| 1\{|x| > |s|\}` and
      :math:`E[\Xi 1\{S>0\}] = 0`, so the bias is at most :math:`E[|\Xi| 1\{|\Xi| > |S|\}]`;
    * split on shells :math:`|S| \in [u_{k-1}, u_k)`; given the G's,
      :math:`E[|\Xi| 1\{|\Xi|\ge u\}] \le H(u) = \min(\sigma, u T(u) + \int_u^\infty T)`
      with the Hoeffding tail :math:`T(t) = \min(1, 2e^{-t^2/(2\sigma^2)})`, :math:`\sigma^2 = n l^2/4`;
    * Abel summation gives :math:`\sum_k F(u_k)(H_{k-1} - H_k) + H_{K-1}` with
      :math:`F(u) = P(|S| < u) \le \min_v P(|\bar S| < u + v) / (1 - T(v))`, and
      :math:`P(|\bar S| \le k l)` comes from ``prob_abs_le(k)`` (vectorised over integer k): an
      upper bound from the same tilted evaluation (aliasing only adds mass; round-off is added).

    Returns the bound on :math:`E[\bar S_+] - E[S_+]` (not divided by n).
    """
    sig = 0.5 * l * math.sqrt(n)
    J = int(math.ceil(BIAS_SIGMAS * 2.0 * sig / l)) + 1

    def P_abs_lt(w):
        k = np.floor(np.asarray(w) / l - 1e-12).astype(np.int64)   # |j| l < w  <=>  |j| <= k
        kk = np.clip(k, 0, J)
        vals = np.minimum(prob_abs_le(kk.ravel()).reshape(kk.shape), 1.0)
        return np.where(k < 0, 0.0, np.where(k >= J, 1.0, vals))

    def T(t):
        return np.minimum(1.0, 2.0 * np.exp(-np.square(t) / (2.0 * sig * sig)))

    tstar = sig * math.sqrt(2.0 * math.log(2.0))
    from scipy.special import erfc

    def H(u):
        u = np.asarray(u, dtype=np.float64)
        tail_int = 2.0 * sig * math.sqrt(math.pi / 2.0) * erfc(np.maximum(u, tstar) / (sig * math.sqrt(2.0)))
        tail_int = tail_int + np.maximum(tstar - u, 0.0)
        return np.minimum(sig, u * T(u) + tail_int)

    u = sig * np.arange(0.125, BIAS_SIGMAS / 2.0 + 1e-9, 0.125)
    Hk = np.minimum.accumulate(H(u))
    Hprev = np.concatenate([[sig], Hk[:-1]])
    Hprev = np.minimum(Hprev, sig)
    vs = sig * np.array([0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0])
    Tv = T(vs)
    good = Tv < 1.0
    F = np.min(P_abs_lt(u[:, None] + vs[None, good]) / (1.0 - Tv[None, good]), axis=1)
    F = np.minimum(F, 1.0)
    return float(np.sum(F * (Hprev - Hk)) + Hk[-1])


def saddle_estimate(gparv: Gparv, n: int) -> float:
    r"""Cheap *estimate* (not a bound) of :math:`\tfrac1n E[(\sum G_i)_+]` by a Gaussian saddle-point
    approximation of the tilted law; used only to bracket root searches.

    With :math:`\theta` solving :math:`nK'(\theta) = 2/\theta`, the tilted sum is approximated by
    :math:`N(\mu, s^2)`, :math:`\mu = nK'(\theta)`, :math:`s^2 = nK''(\theta)`, and
    :math:`\int_0^\infty x e^{-\theta x} N(x;\mu,s^2)dx = e^{-\theta\mu+\theta^2 s^2/2}(m\Phi(m/s)+s\varphi(m/s))`
    with :math:`m = \mu - \theta s^2`.  The estimate is the compiled one the ε search places its first point
    with (``kernels.log_saddle_estimate``, the one implementation), on the law's atoms.

    Parameters
    ----------
    gparv : Gparv
        Law of G (a continuous part enters through 256 representative atoms).
    n : int
        Number of i.i.d. copies (users), >= 1.

    Returns
    -------
    float
        The estimate, in [0, 1]; 0 when G has no positive atom.
    """
    vmin, vmax = gparv.support
    if vmax <= 0:
        return 0.0
    v, p = gparv.approx_atoms(256)
    keep = p > 0
    K = LogMgf(v[keep], p[keep])
    return math.exp(min(kernels.log_saddle_estimate(K.x, K.p, float(n)), 0.0))


def _geom_weighted(eta: float, omega: np.ndarray, J: int) -> np.ndarray:
    """sum_{j=1}^{J} j z^j with z = exp(-eta + i omega) (closed form, stable for small |1 - z|)."""
    e = math.exp(-eta)
    one_minus_z = (-math.expm1(-eta) + 2.0 * e * np.sin(0.5 * omega) ** 2) - 1j * e * np.sin(omega)
    z = e * np.exp(1j * omega)
    zJ = np.exp(-eta * J) * np.exp(1j * np.mod(omega * J, 2 * math.pi))
    return z * (1.0 - zJ - J * zJ * one_minus_z) / one_minus_z ** 2


def _geom_sym(eta: float, omega: np.ndarray, a: np.ndarray) -> np.ndarray:
    """sum_{j=-a}^{a} z^j with z = exp(-eta + i omega), for each a (broadcast)."""
    e = math.exp(-eta)
    one_minus_z = (-math.expm1(-eta) + 2.0 * e * np.sin(0.5 * omega) ** 2) - 1j * e * np.sin(omega)
    a = np.asarray(a, dtype=np.float64)
    zma = np.exp(eta * a) * np.exp(-1j * omega * a)          # z^{-a}
    z2a1 = np.exp(-eta * (2 * a + 1)) * np.exp(1j * omega * (2 * a + 1))
    return zma * (1.0 - z2a1) / one_minus_z


def _spectral_sums(K: LogMgf, idx, n, eta, j_lo, N, mode, max_points):
    r"""Spectral path: the sums of :func:`_window_sums`, by Parseval over frequencies.

    :math:`\sum_{j} g_j q_j = \frac1N \sum_k \tilde\varphi(\omega_k)^n \hat g_k` with closed-form
    :math:`\hat g_k` (geometric series).  Frequency cells where a Lipschitz bound certifies
    :math:`|\tilde\varphi|^n \le` PRUNE_NEGLIGIBLE are skipped and their worst case is charged.
    Returns the sums for :func:`_charge`, or None if more than ``max_points`` frequencies would be
    needed.
    """
    wt = K.tilted(eta)
    n_f = float(n)
    c = float(np.round(np.dot(wt, idx)))
    Lc = float(np.dot(wt, np.abs(idx - c)))               # Lipschitz constant of |phi| in omega
    half = N // 2
    ii = np.ascontiguousarray(idx, dtype=np.int64)
    wtc = np.ascontiguousarray(wt)
    log_neg = math.log(PRUNE_NEGLIGIBLE)
    # hierarchical pruning: a cell [a, a + d) is certified negligible when
    # (|phi(center)| + Lc * 2 pi * d / N)^n <= PRUNE_NEGLIGIBLE; kept cells are split REFINE ways
    # (capped at the half spectrum: Lc -> 0 when the tilted law is nearly a point mass)
    d = max(1, int(min(PRUNE_SLACK * N / (2.0 * math.pi * max(Lc, 1e-300)), half + 1.0)))
    # cells are [starts, ends) and partition 0..half exactly (no frequency may be counted twice)
    starts = np.arange(0, half + 1, d, dtype=np.int64)
    ends = np.minimum(starts + d, half + 1)
    skipped = 0.0
    evaluated = 0
    while True:
        check_time("FFT engine (spectral)")
        sizes = ends - starts
        centers = starts + sizes // 2
        check_work(CF_SECONDS * ii.size * centers.size, "FFT engine (spectral)")
        absphi, _ = kernels.cf_at(ii, wtc, centers, int(N), n_f, 0, False)
        evaluated += centers.size
        # every frequency of a cell is within max(sizes) of its centre
        sup = np.minimum(absphi.real + Lc * 2.0 * math.pi * sizes / N, 1.0)
        with np.errstate(divide="ignore"):
            logsup_n = n_f * np.log(sup)
        keep = (logsup_n > log_neg) | (starts == 0)
        drop = ~keep
        if drop.any():
            skipped += float(np.sum(2.0 * sizes[drop] * np.exp(logsup_n[drop])))
        starts, ends = starts[keep], ends[keep]
        sizes = ends - starts
        if d == 1 or int(sizes.sum()) <= 4096 or evaluated > max_points:
            break
        # the refinement's index arrays: two int64 and one bool per sub-cell, then the kept copies
        check_memory(40.0 * starts.size * REFINE, "FFT engine (spectral)")
        nd = max(1, d // REFINE)
        sub = (starts[:, None] + np.arange(0, d, nd, dtype=np.int64)[None, :])
        sub_end = np.minimum(sub + nd, ends[:, None])
        ok = sub < sub_end
        starts, ends = sub[ok], sub_end[ok]
        d = nd
    if int(sizes.sum()) > max_points:
        return None
    check_memory(128.0 * float(sizes.sum()), "FFT engine (spectral)")
    check_work(CF_SECONDS * ii.size * float(sizes.sum()), "FFT engine (spectral)")
    ks = np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in zip(starts, ends)]) \
        if starts.size else np.zeros(1, dtype=np.int64)
    assert np.unique(ks).size == ks.size, "frequency cells overlap"
    X, err = kernels.cf_at(ii, wtc, ks, int(N), n_f, 0, True)
    mult = np.where((ks == 0) | ((N % 2 == 0) & (ks == half)), 1.0, 2.0)
    omega = 2.0 * math.pi * ks / N
    j_hi = j_lo + N - 1
    # positive-part functional f(j) = j e^{-eta j}, j = 1..j_hi
    Gk = _geom_weighted(eta, omega, j_hi)
    s_f = float(_geom_weighted(eta, np.zeros(1), j_hi).real[0])
    s_raw = float(np.sum(mult * (X * Gk).real)) / N
    err_f = (float(np.sum(mult * err)) + skipped) * s_f / N
    prob_abs_le = None
    if mode == "spread_lower":
        nK = n_f * K(eta)

        def prob_abs_le(kw):
            kw = np.asarray(kw, dtype=np.int64)
            uniq, inv = np.unique(kw, return_inverse=True)
            B = _geom_sym(eta, omega[None, :], uniq[:, None].astype(np.float64))
            vals = (B * X[None, :]).real @ mult / N
            b0 = _geom_sym(eta, np.zeros(1), uniq.astype(np.float64)).real
            errs_ = (float(np.sum(mult * err)) + skipped) * b0 / N
            # the window must contain [-a, a]; otherwise no information (bound 1)
            inside = (-uniq >= j_lo) & (uniq <= j_hi)
            out = np.where(inside, np.exp(nK) * (np.maximum(vals, 0.0) + errs_), 1.0)
            return np.minimum(out, 1.0)[inv.ravel()]

    return s_raw, s_raw, err_f, prob_abs_le
