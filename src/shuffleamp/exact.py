r"""Exact evaluation of :math:`\delta = \tfrac1n E[(G_1+\dots+G_n)_+]` without discretisation.

Method (the functional of Su, Cheng, Wang, Theorems 12–13; the Bromwich evaluation is derived here)
-----------------------------------------------------------------------------------------------------
For a GPARV :math:`G` with finitely many atoms and any :math:`\theta > 0` (Bromwich inversion
of :math:`s \mapsto s_+`, whose two-sided Laplace transform is :math:`1/z^2`):

.. math::

    E[S_+] = \frac{1}{2\pi}\int_{-\infty}^{\infty} \frac{M_G(\theta+it)^n}{(\theta+it)^2}\,dt
           = \frac{e^{nK(\theta)}}{\pi} \int_0^\infty \operatorname{Re} g(t)\,dt,\qquad
    g(t) = \frac{\psi(t)^n e^{itn\mu}}{(\theta+it)^2},

where :math:`K = \log M_G`, :math:`\psi(t) = E_\theta[e^{it(G-\mu)}]` is the characteristic
function of :math:`G - \mu` under the law tilted by :math:`e^{\theta G}` and :math:`\mu` its
mean.  :math:`\theta` is the saddle point of :math:`nK(\theta) - 2\log\theta`, which makes
:math:`g` a bell of width about :math:`(n\sigma_\theta^2 + 2/\theta^2)^{-1/2}`; :math:`\psi^n` is
``exp(n log1p(psi - 1))`` with the principal logarithm, exact for integer ``n``, so the cost
does not grow with ``n``.

Error bound (``Evaluation.charged``, added to upper bounds, subtracted from lower bounds)
-------------------------------------------------------------------------------------------
* **Quadrature** (rigorous): Gauss–Legendre panels of ``GL_NODES`` nodes.  On the Bernstein
  ellipse of a panel, :math:`|M(\theta - \tau + it)| \le M(\theta - \tau)`, so
  :math:`|g| \le e^{n(K(\theta\mp\beta) - K(\theta))}/|z|^2`, and Trefethen's bound
  :math:`\tfrac{64}{15} h M \rho^{-2m}/(\rho^2-1)` applies per panel.
* **Skipped frequencies** (rigorous): cells where
  :math:`\max|\psi| \le |\psi(c)| + |\psi'(c)|h + \sigma_\theta^2h^2/2` makes
  :math:`\max|g|` negligible are charged ``width * max|g|`` and not integrated.
* **Tail** :math:`t > T` (rigorous): integrating by parts,
  :math:`|\int_T^\infty e^{itS}(\theta+it)^{-2}dt| \le \min(1/T,\, 2/(T^2|S|))`; the small-ball
  probabilities of the tilted sum are bounded by the Fejér-kernel inequality
  :math:`P(|S|\le u) \le 2.17534\,u\int_0^{1/u}|\psi|^n`, giving
  :math:`|\text{tail}| \le 4.3507\,T^{-2}\int_0^{T/2} A(w)\,dw/w`,
  :math:`A(w) = \int_0^w |\psi|^n`, with :math:`A` bounded from the same cell bounds.
* **Rounding**: a first-order running bound on the rounding error of :math:`\psi`, its
  logarithm, the phase and :math:`nK(\theta)` (evaluated in ``log1p/expm1`` form so that
  :math:`nK` keeps its accuracy at :math:`n = 10^9`).  This part is an *estimate* of
  first-order propagation, not interval arithmetic.

Small ``n``: when the multinomial count vectors number at most ``ENUMERATE_MAX`` the sum is
enumerated exactly instead; there :math:`|\psi|` returns near 1 at many frequencies and enumeration is
cheaper.

One implementation: for a finite law, the choice between these evaluators and each of them run compiled
(``kernels.positive_part`` on given atoms, ``kernels.profile_bromwich`` for a decomposition at many ε; the
same code).  The Bromwich integral has one implementation for every law, the compiled ``kernels._bromwich_law``:
a law is only its integrand's node values, the modulus bounds of cells and its outer function on the real line.
Laws given through hooks (continuous parts below, personalized populations) reach it through the thin driver
:func:`_bromwich`: a population's nodes are compiled (``kernels.bromwich_population``), a continuous part's
closed-form MGF (scipy's Faddeeva function) is called back from the compiled integral
(``kernels.bromwich_hooks``).

Binomial-mixture sums (evaluator ``"binomial-mixture"``, any ``n``): for a law of at most 7 atoms whose
estimated cost is below the Bromwich integral's estimated cost (``kernels.mixture_positive_part``'s
default budget: about ``5e8 k / (4 n)`` window points at small ``n``, more when one atom holds most of
the tilted law, where the integral needs many nodes; at least ``4e5``; for 6-7 atoms the estimate is
a cost model that replays the evaluator's sign pruning, within ``8e5`` window points),
the sum is evaluated exactly by conditioning the multinomial counts level by level (binomial at
each level; the last atom pair in closed form from binomial tail tables), on windows of the
Chernoff-tilted binomials (tilt: the saddle point above).  Certified: the tilted mass of every
dropped window tail bounds its contribution (:math:`s_+ \le e^{\theta s}/(e\theta)`) and is charged;
the rounding of the pmf recurrences and of the partial sums is a first-order estimate, as for the
enumeration.  It runs in the compiled kernel (``kernels.mixture_positive_part``, the same branch as
``profile_bromwich``'s status 5) and declines (falling back to the integral) when its error bound
exceeds ``rtol`` times its value.  Multinomial enumeration is preferred when it has at most
``kernels.MIXTURE_ENUM_FIRST`` count vectors.

Out of range: when even the Chernoff bound :math:`\delta \le e^{nK(\theta)}/(e\theta n)` is below
the double range, or beats the integral's error bound (a positive atom of denormal mass), that
certified bound is returned (``evaluator="chernoff"``, value 0, error = the bound).

Continuous parts (Laplace): the continuous part enters through its
closed-form MGF (:func:`shuffleamp.gparv.inv_sqrt_mgf`, Faddeeva function) at large
frequencies and through Gauss–Legendre nodes on sub-pieces graded towards the density's poles
at small frequencies, the tilt and :math:`K`.  Everything above stays bounded the same way,
but the accuracy of these two evaluations of the law itself (about 1e-13 relative for the
closed form, spectral for the nodes) is an *estimate*; tests check both against adaptive
quadrature of the density.  :func:`unsupported_reason` says beforehand whether a GPARV can be
evaluated here (a continuous part needs its closed-form MGF and density).

Continuous parts by convex order (:func:`convex_law`, :func:`convex_evaluation`): the continuous part is
replaced by a finite law that dominates it in convex order (a mean-preserving spread of each cell onto
its end points: certified upper bound) or is dominated by it (each cell at its conditional mean:
certified lower bound), and that finite law is evaluated as atoms: conditioned exactly on the terms
that can still make the sum positive, split on a heavy atom at 0 (binomial number of other terms),
enumerated at small n, Bromwich integral otherwise.  The cost no longer depends on how close
:math:`\varepsilon` is to :math:`\varepsilon_0` or on how small n is.  The coarse laws of
:func:`coarse_convex` are evaluated exactly (binomial-mixture sums, meet in the middle) at an a-priori
bounded cost: looser by a few per cent of δ, never unsound.  Coarse cells' masses and conditional means are
always computed on graded sub-cells.

This module provides the evaluators and their cost estimates (:func:`bromwich_work`,
:func:`enumerable_atoms`, :func:`_small_n_points`); which of them runs for a law (the continuous-part
integral or the convex order, which convex-order law, within which work cap) is decided by the selection
policy, :mod:`shuffleamp.evaluate` (``delta_continuous``, ``delta_convex``; its cost model's constants are
listed in ``evaluate.COST_MODEL_DOC``).

References
----------
Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling",
IEEE S&P 2026 (arXiv:2504.07414), Theorems 12–13: δ = (1/n) E[(G_1+...+G_n)_+] of a GPARV G.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.polynomial.legendre import leggauss

from ._ext import kernels
from ._numerics import LogMgf, check_memory, check_time, current_budget
from .decomposition import Decomposition
from .errors import ParameterError, ResourceLimitError, UnsupportedGparvError
from .gparv import Gparv
from .results import Evaluation, ExactDetail

#: Gauss–Legendre nodes per panel.
GL_NODES = 20
_XG, _WG = leggauss(GL_NODES)
#: Default relative accuracy target of δ (the certified error is reported, not assumed).  1e-5 in δ
#: moves ε by about 1e-5 / (d log δ / d log ε) ~ 1e-7 relative at the δ of interest (measured
#: <= 1e-7 against rtol = 1e-7 over a 100-point curve, bench/results_exact.md).
DEFAULT_RTOL = 1e-5
#: Enumerate the multinomial sum exactly when it has at most this many count vectors.
ENUMERATE_MAX = 1_000_000
#: Refuse (ResourceLimitError) beyond this many atom x frequency evaluations.
MAX_WORK = 4e8
#: Atom x frequency evaluations per second assumed when the work cap of one evaluation is derived from
#: the time left in the call's budget (a conservative rate for the compiled loop on a loaded core).
WORK_RATE = 1e7
#: Stop widening the integration range [0, T] beyond this many atom x frequency evaluations.
TAIL_WORK = 2e5
#: First integration range T = theta * sqrt(T0_FACTOR / rtol), widened 4x while the tail bound is too large.
T0_FACTOR = 4.0
#: Saddle points outside this range are answered by the Chernoff bound (the integrand would overflow).
THETA_RANGE = (1e-40, 1e40)
#: Central panels cover [0, CENTRAL_WIDTHS * s0].
CENTRAL_WIDTHS = 16.0
#: Constant of the Fejér small-ball inequality: 2 / sinc(1/2)^2.
FEJER = 2.0 / (2.0 * math.sin(0.5)) ** 2
#: Tail-bound constant 2 * FEJER (with r = 2/T).
TAIL_CONST = 2.0 * FEJER
UPPER_MODES = ("spread", "ceil", "upper")
LOWER_MODES = ("floor", "spread_lower", "lower")
_DBL_EPS = float(np.finfo(np.float64).eps)


def unsupported_reason(gparv: Gparv) -> str | None:
    """Why the exact evaluator cannot evaluate ``gparv``, or None if it can.

    Parameters
    ----------
    gparv : Gparv
        Law of G.

    Returns
    -------
    str or None
        None for finite atomic laws and for continuous parts with a closed-form MGF and density
        (Laplace); otherwise a sentence naming what is missing.
    """
    c = gparv.continuous
    if c is not None and c.mass > 0 and (c.mgf is None or c.density is None):
        return "continuous GPARV without a closed-form MGF"
    return None


def _is_upper(mode: str) -> bool:
    """True for an upper-bound ``mode``, False for a lower-bound one; ParameterError('mode') otherwise."""
    if mode in UPPER_MODES:
        return True
    if mode not in LOWER_MODES:
        raise ParameterError("mode", f"must be one of {UPPER_MODES + LOWER_MODES}, got {mode!r}")
    return False


def delta_exact(gparv: Gparv, n: int, mode: str = "upper", rtol: float | None = None,
                enumerate_max: int | None = None, max_work: float | None = None) -> Evaluation:
    r"""Exact :math:`\tfrac1n E[(\sum_{i\le n} G_i)_+]` for a finite-support GPARV, with an error bound.

    Parameters
    ----------
    gparv : Gparv
        Law of G: atoms, optionally plus a continuous part with ``density`` and ``mgf`` (Laplace).
        Check :func:`unsupported_reason` first for other laws.
    n : int
        Number of i.i.d. copies (users), >= 1.
    mode : {"upper", "lower"} (or the engine's "spread"/"ceil" resp. "floor"/"spread_lower")
        Whether the error bound is added (certified upper bound) or subtracted (certified
        lower bound; floored at 0).
    rtol : float, optional
        Target relative size of the error bound (drives the tail cut-off ``T`` and the
        skipping threshold); default ``DEFAULT_RTOL``.  The achieved bound is returned in
        ``charged``: it can exceed ``rtol`` at small n, where the work budget stops the widening
        of the integration range.
    enumerate_max : int, optional
        Enumerate the multinomial sum when it has at most this many terms; default
        ``ENUMERATE_MAX``.  0 disables both combinatorial evaluators (enumeration and the
        binomial-mixture sums), forcing the Bromwich integral.
    max_work : float, optional
        Lower cap on the atom-frequency evaluations of a GPARV with a continuous part (a deterministic
        work limit; default: :func:`work_cap` only).

    Returns
    -------
    Evaluation
        ``delta`` (certified, see module docstring), ``charged`` (the error bound in δ units),
        ``evaluator`` ("exact", "enumeration", "binomial-mixture", "chernoff" or "trivial") and an
        :class:`~shuffleamp.results.ExactDetail` (the tilt θ and the number of integrand
        evaluations).

    Raises
    ------
    UnsupportedGparvError
        ``unsupported_reason(gparv)`` is not None.
    ParameterError
        Unknown ``mode``.
    ResourceLimitError
        The integration would need more than ``MAX_WORK`` atom-frequency evaluations (fewer when
        the enclosing call's time budget leaves less, see :func:`work_cap`, or ``max_work``), or the call's
        time / memory budget is spent (parameter ``max_seconds`` / ``max_memory_gb``).

    References
    ----------
    Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
    Shuffling", IEEE S&P 2026 (arXiv:2504.07414), Theorems 12–13.
    """
    rtol = DEFAULT_RTOL if rtol is None else rtol
    enumerate_max = ENUMERATE_MAX if enumerate_max is None else enumerate_max
    upper = _is_upper(mode)
    reason = unsupported_reason(gparv)
    if reason is not None:
        raise UnsupportedGparvError(f"exact evaluator: {reason}")
    if gparv.continuous is not None and gparv.continuous.mass > 0:
        if gparv.support[1] <= 0.0:
            value, err, nodes, theta, how = 0.0, 0.0, 0, 0.0, "exact"
        else:
            value, err, nodes, theta, how = _bromwich(_MixedLaw(gparv, int(n)), int(n), rtol, max_work)
    else:
        K = LogMgf(gparv.values, gparv.probs)
        value, err, nodes, theta, how = _positive_part(K, int(n), rtol, enumerate_max)
    return _exact_result(value, err, nodes, theta, how, upper, gparv.support[1] > 0.0)


def _exact_result(value, err, nodes, theta, how, upper: bool, positive: bool) -> Evaluation:
    """The Evaluation of :func:`delta_exact` from the evaluator's (value, error bound, ...): error added (upper)
    or subtracted (lower, floored at 0); an upper of a GPARV with a positive atom is kept above 0."""
    d = value + err if upper else max(value - err, 0.0)
    if upper and d <= 0.0 and positive:
        d = float(np.nextafter(0.0, 1.0))       # true value positive but below the float range
    return Evaluation(min(d, 1.0) if upper else d, "upper" if upper else "lower", err, how,
                      ExactDetail(theta, nodes))


def delta_exact_profile(decomposition, n: int, epsilons, mode: str = "upper", rtol: float | None = None,
                        enumerate_max: int | None = None) -> np.ndarray:
    r"""Certified privacy profile :math:`\varepsilon \mapsto \delta(\varepsilon)` of one GPARV family at many ε.

    For every ``eps`` in ``epsilons`` this returns exactly what
    ``delta_exact(decomposition.gparv(eps), n, mode, rtol, enumerate_max).delta`` returns (the same
    evaluator, integration cells and certified error bound), but the per-ε work for an atomic
    :class:`~shuffleamp.decomposition.Decomposition` runs in one compiled, multi-threaded loop
    (``shuffleamp._ext.kernels.profile_bromwich``) instead of one Python call per ε.  Other families
    (continuous parts, mixtures) and the ε the compiled loop does not handle (non-finite ε, a work
    budget that would be exceeded) are evaluated one by one with :func:`delta_exact`, so the meaning
    of every entry is the same.

    Parameters
    ----------
    decomposition : Decomposition or GparvFamily
        The family :math:`\varepsilon \mapsto G_\varepsilon` (atoms :math:`(a_j - e^\varepsilon b_j)/c_j`
        w.p. :math:`c_j` and 0 w.p. β for a :class:`~shuffleamp.decomposition.Decomposition`).
    n : int
        Number of users, >= 1.
    epsilons : array_like of float
        Central ε values (nats), any shape.
    mode : {"upper", "lower", "both"} (or "spread"/"ceil" resp. "floor"/"spread_lower")
        Certified upper bound (value + error) or lower bound (value − error, floored at 0);
        ``"both"`` returns both from one evaluation (the integral is the same, only the sign of
        the error differs), at the cost of one mode.
    rtol, enumerate_max : optional
        As in :func:`delta_exact`.

    Returns
    -------
    ndarray of float64
        Certified δ at each ε: same shape as ``epsilons``; with ``mode="both"`` shape
        ``(2,) + epsilons.shape`` (upper bounds first, then lower bounds).

    Raises
    ------
    ParameterError
        Unknown ``mode``, or ``n`` < 1.
    UnsupportedGparvError, ResourceLimitError
        As :func:`delta_exact` for the ε where it is called.

    References
    ----------
    Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
    Shuffling", IEEE S&P 2026 (arXiv:2504.07414), Theorems 12–13.
    """
    rtol = DEFAULT_RTOL if rtol is None else rtol
    enumerate_max = ENUMERATE_MAX if enumerate_max is None else enumerate_max
    modes = ("upper", "lower") if mode == "both" else (mode,)
    if not all(m in UPPER_MODES or m in LOWER_MODES for m in modes):
        raise ParameterError("mode", f"must be one of {UPPER_MODES + LOWER_MODES + ('both',)}, got {mode!r}")
    n = int(n)
    if n < 1:
        raise ParameterError("n", f"must be >= 1, got {n}")
    eps = np.asarray(epsilons, dtype=np.float64)
    flat = np.ascontiguousarray(eps.ravel())
    if isinstance(decomposition, Decomposition) and flat.size:
        up, lo, status, _, _ = _profile_kernel(decomposition, n, flat, rtol, enumerate_max)
        outs = [up if m in UPPER_MODES else lo for m in modes]
        redo = np.flatnonzero(status < 0)
    else:
        outs = [np.empty(flat.size) for _ in modes]
        redo = np.arange(flat.size)
    for i in redo:                        # cases the compiled loop leaves to delta_exact
        g = decomposition.gparv(float(flat[i]))
        for out, m in zip(outs, modes):
            out[i] = delta_exact(g, n, m, rtol, enumerate_max).delta
    if mode == "both":
        return np.stack([o.reshape(eps.shape) for o in outs])
    return outs[0].reshape(eps.shape)


def work_cap() -> float:
    """Atom x frequency evaluations one evaluation may spend: ``MAX_WORK``, or less when the enclosing
    call's time budget (:func:`shuffleamp._numerics.current_budget`) leaves less (a quarter of it)."""
    b = current_budget()
    if b is None:
        return MAX_WORK
    return max(min(MAX_WORK, 0.25 * WORK_RATE * b.remaining()), 1e5)


def _enum_ok(n: int, k: int, enumerate_max: int) -> np.ndarray:
    """``enum_ok[kk]`` = 1 when a law with ``kk`` atoms is enumerated at this n (as :func:`_positive_part`)."""
    enum_ok = np.zeros(k + 2, dtype=np.uint8)
    for kk in range(1, k + 2):        # comb grows with the number of atoms: stop at the first miss
        if not (enumerate_max and math.comb(n + kk - 1, kk - 1) <= enumerate_max):
            break
        enum_ok[kk] = 1
    return enum_ok


def _profile_kernel(dec, n: int, flat: np.ndarray, rtol: float, enumerate_max: int, max_work: float = MAX_WORK):
    """``kernels.profile_bromwich`` of an atomic Decomposition at the contiguous ε array ``flat``."""
    if dec.a.size and len(flat) * dec.a.size * 1e3 > 1e12:     # pragma: no cover - absurd batch
        raise ResourceLimitError("exact profile: too many epsilons", parameter="epsilons", resource="memory")
    return kernels.profile_bromwich(
        np.ascontiguousarray(dec.a), np.ascontiguousarray(dec.b), np.ascontiguousarray(dec.c),
        float(dec.beta), float(n), flat, _enum_ok(n, dec.a.size, enumerate_max), float(rtol), _XG, _WG,
        float(max_work), float(TAIL_WORK), float(T0_FACTOR), float(THETA_RANGE[0]), float(THETA_RANGE[1]),
        float(CENTRAL_WIDTHS), float(TAIL_CONST))


#: profile_bromwich status -> Evaluation.evaluator
_STATUS_NAMES = {0: "exact", 1: "chernoff", 2: "trivial", 3: "exact", 4: "enumeration", 5: "binomial-mixture",
                 6: "enumeration"}


def delta_exact_family(family, n: int, epsilon: float, mode: str = "upper") -> Evaluation:
    r"""``delta_exact(family.gparv(epsilon), n, mode)`` of one GPARV family at one ε, by the compiled loop.

    For an atomic :class:`~shuffleamp.decomposition.Decomposition` the evaluation runs in
    ``kernels.profile_bromwich`` (the same evaluator, cells and certified error bound as
    :func:`delta_exact`, without building the :class:`~shuffleamp.gparv.Gparv` or any Python-level
    orchestration); every other family, and an ε the compiled loop leaves to the Python evaluator,
    goes through :func:`delta_exact`.

    Parameters
    ----------
    family : Decomposition or GparvFamily
        The family :math:`\varepsilon \mapsto G_\varepsilon`.
    n : int
        Number of users, >= 1.
    epsilon : float
        Central ε (nats).
    mode : str
        As in :func:`delta_exact`.

    Returns
    -------
    Evaluation
        ``delta`` is exactly ``delta_exact(family.gparv(epsilon), n, mode).delta``.  ``charged``
        is the error bound recovered from the two certified sides (``(upper - lower) / 2``, or
        ``upper - lower`` when a side is clamped at 0 or 1: never smaller than the bound charged).

    Raises
    ------
    UnsupportedGparvError, ParameterError, ResourceLimitError
        As :func:`delta_exact`.
    """
    upper = _is_upper(mode)
    if isinstance(family, Decomposition):
        cap = work_cap()
        up, lo, status, theta, nodes = _profile_kernel(family, int(n), np.array([float(epsilon)]), DEFAULT_RTOL,
                                                       ENUMERATE_MAX, cap)
        st = int(status[0])
        if st == -2:
            raise ResourceLimitError(f"exact evaluator: more than {cap:.0e} atom-frequency evaluations "
                                     f"(n={n}, {family.a.size} atoms); use evaluator='fft'", resource="time")
        if st >= 0:
            return _kernel_evaluation(float(up[0]), float(lo[0]), st, float(theta[0]), nodes[0], upper)
    return delta_exact(family.gparv(float(epsilon)), n, mode)


def _kernel_evaluation(u: float, l_: float, st: int, theta: float, nodes, upper: bool) -> Evaluation:
    """The :class:`Evaluation` of one compiled evaluation (both certified sides ``u``, ``l_`` and its status)."""
    charged = 0.5 * (u - l_) if (l_ > 0.0 and u < 1.0) else u - l_
    return Evaluation(u if upper else l_, "upper" if upper else "lower", max(charged, 0.0),
                      _STATUS_NAMES.get(st, "exact"), ExactDetail(theta, int(nodes)))


def _positive_part(K: LogMgf, n: int, rtol: float, enumerate_max: int, max_work: float | None = None):
    """(value, error bound, node count, theta, how) of E[S_+]/n for the finite law of ``K``.

    The compiled evaluator of finite laws (``kernels.positive_part``: the dispatch and the Bromwich integral of
    ``profile_bromwich``, on the given atoms): closed cases, binomial-mixture sums, meet in the middle,
    multinomial enumeration (``enumerate_max``; 0 disables every combinatorial path) or the Bromwich integral
    within :func:`work_cap`.  An explicit ``max_work`` (atom-frequency evaluations) lowers that cap and makes
    the integral refuse before integrating beyond it (a ResourceLimitError carrying ``nodes_needed``, see
    :func:`_work_error`).
    """
    check_time("exact evaluator")
    v, p = K.x, K.p
    n = int(n)
    cap = work_cap() if max_work is None else min(work_cap(), float(max_work))
    st, value, err, theta, work = kernels.positive_part(
        v, p, float(n), _enum_ok(n, v.size, enumerate_max), float(rtol), _XG, _WG, float(cap),
        0.0 if max_work is None else float(max_work), float(TAIL_WORK), float(T0_FACTOR), float(THETA_RANGE[0]),
        float(THETA_RANGE[1]), float(CENTRAL_WIDTHS), float(TAIL_CONST))
    return _integral_result(st, value, err, work, theta, cap, n, v.size)


class _AtomLaw:
    """Finite atomic law at the tilt theta: psi, its bounds and K through the Cython kernels.

    The base of the laws :func:`_bromwich` hands to the compiled integral (:class:`_MixedLaw` through its Python
    hooks, the personalized populations' law through its compiled outer function): its atoms carry the tilt and
    the small frequencies.  A plain finite law is evaluated by the compiled evaluator (:func:`_positive_part`),
    not through this class.
    """

    def __init_subclass__(cls, **kwargs):
        # the integral reads a hook law's integrand only through panel_nodes, whose base version is the compiled
        # n-fold sum's: a law with its own integrand (nodes) must give its own panel_nodes too, or it would silently
        # integrate the n-fold sum instead of itself.
        super().__init_subclass__(**kwargs)
        if "nodes" in cls.__dict__ and "panel_nodes" not in cls.__dict__:
            raise TypeError(f"{cls.__name__} overrides nodes() but not panel_nodes(): _bromwich integrates "
                            "panel_nodes(), so both must describe the same integrand")

    def __init__(self, K: LogMgf, n):
        v, p = K.x, K.p
        self.K, self.v, self.p, self.n = K, v, p, n
        self.theta, self.mu, _ = K.saddle(n)
        if not (math.isfinite(self.theta) and math.isfinite(self.mu)):
            self.theta = math.inf if not math.isfinite(self.theta) else self.theta
            self.q, self.d, self.L1, self.s2, self.size = p, v, 0.0, 0.0, v.size
            return
        self.q = K.tilted(self.theta)
        self.d = v - self.mu
        self.L1 = float(self.q @ np.abs(self.d))
        self.s2 = float(self.q @ (self.d * self.d))
        self.size = v.size

    def log_mgf(self, x):
        return self.K(x)

    def positive_mean(self):
        """E[G_+] (rounded up): (sum G_i)_+ <= sum (G_i)_+ makes it an upper bound on delta."""
        return float(self.p @ np.maximum(self.v, 0.0)) * (1.0 + 4.0 * self.size * _DBL_EPS)

    def log_mgf_error(self, x):
        """Rounding bound of K(x) in the log1p/expm1 form: (k + 4) eps (sum p |expm1(x v)| + |K|)."""
        return (self.size + 4) * _DBL_EPS * (float(self.p @ np.abs(np.expm1(np.minimum(x * self.v, 700.0))))
                                             + abs(self.log_mgf(x)))

    # Hooks for the integrand's outer function F, here F(w) = w^n / n (the n-fold sum; ``norm`` = n
    # carries the 1/n).  A law whose Bromwich integrand is F(M(z))/z^2 for another F with
    # non-negative Taylor coefficients (shuffleamp.population) overrides them; _bromwich only
    # uses these, so the numbers of the n-fold sum are unchanged.
    @property
    def norm(self):
        """Divisor of the integral (n: delta = E[S_+] / n)."""
        return self.n

    def outer_log(self, K):
        """log of the outer function's numerator at the real point e^K: n K."""
        return self.n * K

    def outer_log_ratio(self, x, K):
        """log F(M(x)) - log F(e^K) for real x (bounds |F(M(z))| on the line Re z = x)."""
        return self.n * (self.log_mgf(x) - K)

    def outer_log_error(self, theta):
        """Rounding bound of outer_log(K(theta))."""
        return self.n * self.log_mgf_error(theta)

    def outer_modulus(self, r):
        """Bound of |F(M(theta) psi)| / F(M(theta)) given |psi| <= r (array): r^n."""
        return r ** self.n

    def bell_width(self):
        """Heuristic width of the integrand's bell in t (placement of the central panels)."""
        return 1.0 / math.sqrt(self.n * self.s2 + 2.0 / self.theta ** 2)

    def nodes(self, t):
        m = t.size
        gr, ag, rel = np.empty(m), np.empty(m), np.empty(m)
        kernels.bromwich_nodes(self.q, self.d, float(self.n), self.n * self.mu, self.theta, t, gr, ag, rel)
        return gr, ag, rel

    def panel_nodes(self, a, b):
        """``nodes`` at the Gauss–Legendre nodes of the panels [a_i, b_i] (panel-major), formed as the compiled
        profile forms them for the same sequence of panels (``kernels.panel_nodes``)."""
        return kernels.panel_nodes(self.q, self.d, float(self.n), self.n * self.mu, self.theta,
                                   np.ascontiguousarray(a, dtype=np.float64),
                                   np.ascontiguousarray(b, dtype=np.float64), _XG)

    def rho(self, c, h):
        out = np.empty(c.size)
        kernels.cf_modulus_bound(self.q, self.d, self.s2, c, h, out)
        return out

    def compiled_outer(self):
        """The arguments of a compiled integrand after the law's scalars (``kernels.bromwich_population``), or
        None: :func:`_bromwich` then integrates through the Python hooks (``panel_nodes``, ``rho``,
        ``outer_modulus``, ``outer_log_ratio``)."""
        return None


#: Gauss–Legendre nodes per sub-piece of a continuous part (small frequencies).  Sub-pieces are no
#: longer than their distance to the nearest pole of the density nor than 1/8 of their piece, so the
#: Bernstein ellipse parameter is >= 3 + sqrt 8 and 24 nodes reach ~1e-30.
CONT_NODES = 24
#: Frequencies up to CONT_SWITCH / (longest sub-piece) use the Gauss nodes, larger ones the closed-form
#: MGF (whose cancellation near t = 0 would cost n * 1e-13 relative).
CONT_SWITCH = 20.0
#: Relative accuracy assumed for the closed-form MGF (scipy.special.wofz): an estimate.
MGF_REL = 1e-13
_XC, _WC = leggauss(CONT_NODES)


def _sub_pieces(c):
    """Sub-intervals of the continuous part's analytic pieces, graded towards the density's poles."""
    pts = [c.lo, *c.breaks, c.hi]
    out = []
    for i, (a, b) in enumerate(zip(pts[:-1], pts[1:])):
        cap = (b - a) / 8.0
        poles = c.poles[i] if i < len(c.poles) else ()
        if any(a < P < b for P in poles):
            raise ValueError("a density pole lies inside its piece")

        def dist(x, poles=poles, floor=1e-9 * (b - a)):
            return max(min([abs(x - P) for P in poles], default=math.inf), floor)

        # walk from the end nearer to a pole; each step no longer than the distance to the pole
        left_first = dist(a) <= dist(b)
        x0, x1 = (a, b) if left_first else (b, a)
        sgn = 1.0 if left_first else -1.0
        x = x0
        pieces = []
        while sgn * (x1 - x) > 1e-15 * (b - a):
            step = min(cap, dist(x), sgn * (x1 - x))
            y = x + sgn * step
            if sgn * (x1 - y) < 1e-12 * (b - a):
                y = x1
            pieces.append((min(x, y), max(x, y)))
            x = y
        out.extend(pieces)
    return out


class _MixedLaw(_AtomLaw):
    """Atoms plus a continuous part with a closed-form MGF (Laplace).

    The continuous part is represented by Gauss–Legendre nodes on each analytic piece for the
    tilt, K and small frequencies (spectrally accurate: the density is analytic on each piece and
    the frequencies are below CONT_SWITCH per half-width), and by its closed-form MGF at larger
    frequencies.  The tilted variance used by the certified modulus bound is inflated by the
    within-node spread ``(max node gap)^2 / 4``.  The accuracy of the law's own evaluation is an
    estimate (MGF_REL for the closed form); everything else is bounded as for atoms.
    """

    def __init__(self, g, n):
        c = g.continuous
        xs, ws = [], []
        len_max, gap = 0.0, 0.0
        x, w = _XC, _WC
        for a, b in _sub_pieces(c):
            h = 0.5 * (b - a)
            s = 0.5 * (a + b) + h * x
            xs.append(s)
            ws.append(h * w * c.density(s))
            len_max = max(len_max, b - a)
            gap = max(gap, float(np.max(np.diff(np.concatenate([[a], s, [b]])))))
        v = np.concatenate([g.values, *xs])
        p = np.concatenate([g.probs, *ws])
        order = np.argsort(v, kind="stable")
        super().__init__(LogMgf(v[order], p[order]), n)
        self.s2 = self.s2 + 0.25 * gap * gap
        self.t_switch = CONT_SWITCH / len_max
        self.mgf = c.mgf
        self.av, self.ap = g.values, g.probs
        self.M_theta = math.exp(self.log_mgf(self.theta))
        self.cmass = c.mass
        self.width = c.hi - c.lo

    def positive_mean(self):
        return math.inf          # the Gauss nodes only approximate E[G_+]: not used as a bound

    def _psi_closed(self, t):
        """psi(t) and psi'(t) from the closed forms (large t)."""
        z = self.theta + 1j * t
        M, dM = self.mgf(z)
        ea = np.exp(z[:, None] * self.av[None, :])
        M = M + ea @ self.ap
        dM = dM + ea @ (self.ap * self.av)
        rot = np.exp(-1j * t * self.mu) / self.M_theta
        return M * rot, (dM - self.mu * M) * rot

    def panel_nodes(self, a, b):
        c = 0.5 * (a + b)
        h = 0.5 * (b - a)
        return self.nodes(np.ascontiguousarray((c[:, None] + h[:, None] * _XG[None, :]).ravel()))

    def nodes(self, t):
        small = t <= self.t_switch
        gr, ag, rel = np.empty(t.size), np.empty(t.size), np.empty(t.size)
        if small.any():
            gr[small], ag[small], rel[small] = super().nodes(np.ascontiguousarray(t[small]))
        big = ~small
        if big.any():
            tb = t[big]
            psi, _ = self._psi_closed(tb)
            rho = np.abs(psi)
            L = self.n * np.log(np.maximum(rho, 1e-300))
            ph = self.n * np.angle(psi) + tb * self.n * self.mu
            z2 = (self.theta + 1j * tb) ** 2
            val = np.exp(L + 1j * ph) / z2
            gr[big] = val.real
            ag[big] = np.abs(val)
            # |M_c(theta + it)| <= M_c(theta) <= M(theta); the closed form's terms cancel by up to
            # ~|t| (hi - lo) at large t: relative error of psi estimated as MGF_REL (1 + |t| width)
            err_psi = MGF_REL * (1.0 + tb * self.width) + (self.size + 4) * _DBL_EPS
            rel[big] = self.n * err_psi / np.maximum(rho, 1e-300) * 1.01 + 8 * _DBL_EPS * (1 + np.abs(L) + np.abs(ph))
        return gr, ag, rel

    def rho(self, c, h):
        small = c + h <= self.t_switch
        out = np.empty(c.size)
        if small.any():
            out[small] = super().rho(np.ascontiguousarray(c[small]), np.ascontiguousarray(h[small]))
        big = ~small
        if big.any():
            psi, dpsi = self._psi_closed(c[big])
            hb = h[big]
            r = np.abs(psi) * (1 + 1e-9) + 1e-12 + np.abs(dpsi) * (1 + 1e-9) * hb + 0.5 * self.s2 * hb * hb
            out[big] = np.minimum(r, 1.0)
        return out


def bromwich_work(law) -> float:
    """Atom x frequency evaluations of the central panels of :func:`_bromwich` on ``law`` (its minimum work
    once it integrates; 0 when it returns a Chernoff / trivial bound before integrating).  Deterministic: it
    reads only the law's saddle point and bell width, the quantities that place those panels."""
    theta = law.theta
    if not math.isfinite(theta) or not (THETA_RANGE[0] < theta < THETA_RANGE[1]):
        return 0.0
    Kth = law.log_mgf(theta)
    nK = law.outer_log(Kth)
    log_chernoff = nK - 1.0 - math.log(theta * law.norm)
    if not math.isfinite(log_chernoff) or log_chernoff < -700.0 or nK - math.log(math.pi * law.norm) > 700.0:
        return 0.0
    s0 = law.bell_width()
    hp = min(0.5 * theta, s0)
    nc = max(1, int(math.ceil(CENTRAL_WIDTHS * s0 / (2.0 * hp))))
    return float(nc) * GL_NODES * law.size


#: Work of one meet-in-the-middle point and of one enumerated count vector, in atom-frequency evaluations
#: of the Bromwich integral (for the work caps of :func:`_zero_split`).
WORK_PER_MITM_POINT = 20.0
WORK_PER_COUNT_VECTOR = 2.0


def _enumeration_work(v: np.ndarray, n: int, enumerate_max: int) -> float:
    """Work of :func:`_positive_part` on ``v`` at ``n`` when it enumerates (meet in the middle or count vectors),
    in atom-frequency evaluations; 0 when it integrates or the answer is immediate."""
    if float(v.max()) <= 0.0 or float(v.min()) >= 0.0 or not enumerate_max:
        return 0.0
    k = v.size
    if kernels.small_n_chosen(float(n), k):
        return WORK_PER_MITM_POINT * _small_n_points(n, k)
    cnt = math.comb(n + k - 1, k - 1)
    return WORK_PER_COUNT_VECTOR * cnt if cnt <= enumerate_max else 0.0


def _small_n_points(n: int, k: int) -> int:
    """Points of both halves of the meet-in-the-middle enumeration (``kernels.small_n_positive_part``)."""
    na, nb = n - n // 2, n // 2
    return math.comb(na + k - 1, k - 1) + math.comb(nb + k - 1, k - 1)


def _integral_result(st: int, value: float, err: float, work: float, theta: float, cap: float, n: int, atoms):
    """(value, err, work, theta, evaluator name) of a compiled integral's status ``st``, or its refusal: over the
    explicit work cap (-3, carrying ``nodes_needed``), over the library's cap (-2), outside the compiled
    evaluator's range (other negative statuses)."""
    if st == -3:
        raise _work_error(f"exact evaluator: more than {cap:.0e} atom-frequency evaluations (n={n}, {atoms} atoms)",
                          work)
    if st == -2:
        raise ResourceLimitError(f"exact evaluator: more than {cap:.0e} atom-frequency evaluations "
                                 f"(n={n}, {atoms} atoms); use evaluator='fft'")
    if st < 0:
        raise ResourceLimitError(f"exact evaluator: the Bromwich integral of this law leaves the compiled "
                                 f"evaluator's range (n={n}, {atoms} atoms); use evaluator='fft'")
    return value, err, int(work), theta, _STATUS_NAMES.get(st, "exact")


def _work_error(message: str, nodes: float) -> ResourceLimitError:
    """The refusal of a Bromwich integral over its explicit work cap, carrying a lower bound on the integrand
    nodes it needed (``nodes_needed``: a law of fewer atoms on the same tilt needs about as many)."""
    err = ResourceLimitError(message)
    err.nodes_needed = float(nodes)
    return err


class _Hooks:
    """A law's hooks as the compiled integral calls them (``kernels.bromwich_hooks``): node values of panels, the
    outer function of the modulus bounds of cells (with the call's time and memory checks) and the outer log-ratio
    on the real line.  An exception a hook raises is kept in ``error`` and re-raised by :func:`_bromwich`."""

    def __init__(self, law, Kth):
        self.law, self.Kth, self.error = law, Kth, None

    def nodes(self, a, b):
        return self.law.panel_nodes(a, b)

    def modulus(self, c, h):
        check_time("exact evaluator")
        # the kernel's cell arrays at this refinement pass and the panels' node arrays (GL_NODES per cell)
        check_memory(c.size * 8.0 * (8 + 4 * GL_NODES) * 2.0, "exact evaluator")
        return self.law.outer_modulus(self.law.rho(c, h))

    def ell(self, x):
        return self.law.outer_log_ratio(x, self.Kth)


def _bromwich(law, n, rtol, max_work=None):
    """(value, error bound, node count, theta, how) of the Bromwich integral of a law given through hooks.

    A thin driver: the integral itself (cells, skipping rule, panel merge, Gauss–Legendre and tail bounds,
    Chernoff and trivial fallbacks) is the compiled one that also integrates finite laws
    (``kernels._bromwich_law``); this function reads the law's scalars from its hooks (tilt, outer function at
    the tilt, certified E[G_+], bell width, rounding bound) and hands over the integrand: compiled when the law
    has compiled nodes (``law.compiled_outer()``: a personalized population's mixture over blanket counts,
    ``kernels.bromwich_population``), else through the Python hooks ``panel_nodes``, ``rho``/``outer_modulus``
    and ``outer_log_ratio`` (a continuous part with its closed-form MGF, :class:`_MixedLaw`;
    ``kernels.bromwich_hooks``).  Finite atomic laws never come here: their evaluator is
    :func:`_positive_part`.  ``max_work`` (atom x frequency evaluations) lowers the work cap of :func:`work_cap`
    and makes the integral refuse before integrating beyond it (:func:`_work_error`).
    """
    theta = law.theta
    # (sum G_i)_+ <= sum (G_i)_+: delta <= E[G_+], a certified fallback for degenerate tilts
    trivial = law.positive_mean()
    Kth = law.log_mgf(theta) if math.isfinite(theta) else math.nan
    nK = law.outer_log(Kth)
    inside = math.isfinite(theta) and THETA_RANGE[0] < theta < THETA_RANGE[1]
    s0 = law.bell_width() if inside else math.nan
    nK_err = law.outer_log_error(theta) if inside else math.nan
    cap = work_cap() if max_work is None else min(work_cap(), float(max_work))
    par = (float(rtol), _XG, _WG, float(cap), 0.0 if max_work is None else float(max_work), float(TAIL_WORK),
           float(T0_FACTOR), float(THETA_RANGE[0]), float(THETA_RANGE[1]), float(CENTRAL_WIDTHS), float(TAIL_CONST))
    outer = law.compiled_outer() if inside else None
    hooks = None
    if outer is not None:
        check_time("exact evaluator")
        st, value, err, work = kernels.bromwich_population(
            law.v, law.p, law.q, law.d, float(theta), float(law.mu), float(law.L1), float(law.s2), float(nK),
            float(trivial), float(s0), float(nK_err), *outer, *par)
    else:
        hooks = _Hooks(law, Kth)
        st, value, err, work = kernels.bromwich_hooks(
            hooks, law.v, law.p, law.q, law.d, float(theta), float(law.L1), float(nK), float(law.norm),
            float(trivial), float(s0), float(nK_err), float(law.size), *par)
    if hooks is not None and hooks.error is not None:
        raise hooks.error
    return _integral_result(st, value, err, work, theta, cap, n, law.size)


# ---------------------------------------------------------------------------- continuous parts by convex order
#: Cells per analytic piece of a continuous part, graded geometrically towards the density's pole.
CONVEX_CELLS_PIECE = 48
#: Equal-width cells over the part of the support where the positive part bends (see
#: :func:`convex_order_atoms`).
CONVEX_CELLS_UNIFORM = 48
#: Default geometric grading: at most this log-ratio of distances to the pole per cell ...
CONVEX_CELL_LOG_RATIO = 0.25
#: ... with at most this many cells per piece.
CONVEX_CELLS_MAX = 256
#: Gauss–Legendre nodes per cell for the cells' conditional means (the density is analytic on each
#: cell, whose end points are within a bounded ratio of their distances to the pole).
CONVEX_MEAN_NODES = 16
_XM, _WM = leggauss(CONVEX_MEAN_NODES)
#: Target relative error bound of the atomic evaluation of the finite law (Bromwich) ...
CONVEX_RTOL = 1e-4
#: ... retried at DEFAULT_RTOL when the achieved error bound exceeds this fraction of the value.
CONVEX_RETRY_ERR = 0.02
#: Kinks :math:`-(j\,g_{hi} + k\,g_{lo})` of :math:`x \mapsto E[(x + G_2 + \dots + G_n)_+]` made cell edges,
#: for :math:`j + k \le` this (the heaviest atoms of the partial sum).
CONVEX_KINK_ORDER = 3


def _piece_edges(a: float, b: float, poles, cells: int | None) -> np.ndarray:
    """Edges of ``[a, b]``, geometric in the distance to the nearest pole (outside): ``cells`` cells, or
    by default enough for a log-ratio of at most CONVEX_CELL_LOG_RATIO per cell (within the limits)."""
    if not b > a:
        return np.array([a, b])
    d = [(abs(a - P), abs(b - P), P) for P in poles if not (a < P < b)]
    if cells is None:
        cells = CONVEX_CELLS_PIECE
    if d:
        da, db, P = min(d, key=lambda r: min(r[0], r[1]))
        if min(da, db) > 0.0 and max(da, db) / min(da, db) > 1.5:
            if cells == CONVEX_CELLS_PIECE:
                want = math.ceil(abs(math.log(db / da)) / CONVEX_CELL_LOG_RATIO)
                cells = int(min(max(cells, want), CONVEX_CELLS_MAX))
            g = np.geomspace(da, db, cells + 1)
            e = P + g if a >= P else P - g
            e[0], e[-1] = (a, b) if e[0] < e[-1] else (b, a)
            return np.sort(e)
    return np.linspace(a, b, cells + 1)


def convex_order_atoms(gparv: Gparv, n: int, mode: str, cells_piece: int | None = None,
                       cells_uniform: int | None = None, kink_order: int | None = None):
    r"""Finite atomic law bounding ``gparv`` in convex order (upper) or bounded by it (lower).

    The continuous part is cut into cells :math:`(e_i, e_{i+1}]`: their masses :math:`m_i` come from
    the part's closed-form CDF :math:`F`, with :math:`F` pinned to 0 and to the part's mass at its ends so that the masses sum to one; the
    cells' conditional means by Gauss–Legendre quadrature of the density on each cell (without a
    density: :math:`\mu_i = e_{i+1}F(e_{i+1}) - e_iF(e_i) - (I(e_{i+1}) - I(e_i))`, :math:`I` the
    integrated CDF).

    * ``"upper"``: each cell's mass is spread onto its two end points with the same mean (a
      mean-preserving spread).  The atomic law :math:`\bar G` dominates :math:`G` in convex order;
      sums of independent copies keep the order and :math:`s \mapsto s_+` is convex, so
      :math:`E[(\sum \bar G_i)_+] \ge E[(\sum G_i)_+]`.
    * ``"lower"``: each cell's mass goes to its conditional mean :math:`\mu_i / m_i`
      (:math:`\bar G = E[G \mid \text{cell}]`), so by Jensen's inequality
      :math:`E[(\sum \bar G_i)_+] \le E[(\sum G_i)_+]`.

    Both hold for any cells; the cells only decide the gap.  Cells lying entirely at or below
    :math:`-(n-1)\max G` cost nothing (there :math:`x \mapsto (x + G_2 + \dots + G_n)_+` is zero) and are
    merged into one; the rest are graded geometrically towards the density's poles on each analytic
    piece, refined uniformly where the positive part bends, and cut at 0 and at the heaviest kinks
    :math:`-(j g_{hi} + k g_{lo})` of the partial sums of the atoms.

    Parameters
    ----------
    gparv : Gparv
        Law with a continuous part (atoms are kept as they are).
    n : int
        Number of users, >= 1 (places the cells).
    mode : {"upper", "lower"}
        Side of the convex order.
    cells_piece, cells_uniform : int, optional
        Cells per analytic piece (default: :data:`CONVEX_CELLS_PIECE`, more when the piece spans
        more than :data:`CONVEX_CELL_LOG_RATIO` per cell in log-distance to its pole, at most
        :data:`CONVEX_CELLS_MAX`) and equal-width cells (default :data:`CONVEX_CELLS_UNIFORM`).
    kink_order : int, optional
        Largest :math:`j + k` of the kinks made cell edges (default :data:`CONVEX_KINK_ORDER`).

    Returns
    -------
    values, probs : numpy.ndarray of float64
        Atoms of the bounding law (zero masses dropped).

    Notes
    -----
    The cell masses and moments are evaluated in floating point from closed forms (relative
    accuracy about 1e-15 each); that rounding of the law itself is an estimate, not bounded.
    """
    c = gparv.continuous
    vals, probs = gparv.values, gparv.probs
    top = float(gparv.support[1])
    clo, chi = float(c.lo), float(c.hi)
    a = max(clo, -(n - 1) * top) if top > 0.0 else clo
    a = min(a, chi)
    pts = [clo, *c.breaks, chi]
    edges = [np.array([clo, a, chi])]
    graded = []         # the default grading: sub-cells on which the quadrature of the means is accurate
    for i, (u, w) in enumerate(zip(pts[:-1], pts[1:])):
        u2 = max(u, a)
        poles = c.poles[i] if i < len(c.poles) else ()
        if w > u2:
            edges.append(_piece_edges(u2, w, poles, cells_piece))
            if cells_piece is not None:
                graded.append(_piece_edges(u2, w, poles, None))
        if u < a:       # below a: merged into one cell later; graded here only for its mean's quadrature
            edges.append(_piece_edges(u, min(w, a), poles, None))
    edges.append(np.linspace(a, chi, (CONVEX_CELLS_UNIFORM if cells_uniform is None else cells_uniform) + 1))
    kinks = [0.0]
    pos = float(vals.max()) if vals.size else 0.0
    neg = float(vals.min()) if vals.size else 0.0
    ko = CONVEX_KINK_ORDER if kink_order is None else int(kink_order)
    for j in range(ko + 1):
        for k in range(ko + 1 - j):
            if 0 < j + k <= n - 1:
                kinks.append(-(j * pos + k * neg))
    edges.append(np.array(kinks))
    e = np.unique(np.concatenate(edges))
    e = e[(e >= clo) & (e <= chi)]
    if e.size < 2:
        e = np.array([clo, chi])
    req = None
    if graded:
        # coarse cells: masses and means are computed on the finer graded sub-cells (a cell spanning many
        # log-distances to the density's pole defeats the cell's Gauss-Legendre quadrature) and aggregated
        sub = np.unique(np.concatenate([e, *graded]))
        sub = sub[(sub >= clo) & (sub <= chi)]
        if sub.size > e.size:
            req, e = e, sub
    # F(lo) = 0 and F(hi) = mass by definition: pin them, so that the rounding of the closed form near
    # the ends cannot lose mass (a defect eta of the total would scale E[S_+] by about (1 + eta)^n)
    F = np.maximum.accumulate(np.clip(c.cdf(e), 0.0, c.mass))
    F[0], F[-1] = 0.0, c.mass
    m = np.diff(F)
    ok = m > 0.0
    m, L, R = m[ok], e[:-1][ok], e[1:][ok]
    if c.density is not None:
        # conditional mean L + E[s - L | cell] by Gauss-Legendre on the cell: no cancellation (the
        # integrated-CDF form loses ~eps * |s| * F absolutely, far more than a cell's moment at large eps0)
        h = 0.5 * (R - L)
        x = (0.5 * (L + R))[:, None] + h[:, None] * _XM[None, :]
        with np.errstate(all="ignore"):
            wd = np.nan_to_num(c.density(x), nan=0.0, posinf=0.0) * _WM[None, :]
            num, den = (wd * (x - L[:, None])).sum(axis=1), wd.sum(axis=1)
            frac = np.where(den > 0.0, num / np.where(den > 0.0, den, 1.0), h)
        mean = np.clip(L + frac, L, R)
    else:
        I = c.icdf(e)
        mom = (np.diff(e * F) - np.diff(I))[ok]
        mean = np.clip(mom / m, L, R)
    if req is not None:
        # aggregate the sub-cells into the requested cells: mass and first moment add up
        idx = np.clip(np.searchsorted(req, L, side="right") - 1, 0, req.size - 2)
        mm = np.bincount(idx, weights=m, minlength=req.size - 1)
        mo = np.bincount(idx, weights=m * (mean - req[idx]), minlength=req.size - 1)
        okr = mm > 0.0
        Lr, Rr = req[:-1][okr], req[1:][okr]
        m, L, R = mm[okr], Lr, Rr
        mean = np.clip(Lr + mo[okr] / m, Lr, Rr)
    low = R <= a
    if low.sum() > 1:      # cells at or below a = -(n-1) max G: one cell, its mass and conditional mean
        mb = math.fsum(m[low])
        xb = min(max(math.fsum(m[low] * mean[low]) / mb, clo), float(R[low][-1]))
        m = np.concatenate([[mb], m[~low]])
        mean = np.concatenate([[xb], mean[~low]])
        L = np.concatenate([[clo], L[~low]])
        R = np.concatenate([[float(R[low][-1])], R[~low]])
    if mode == "lower":
        v, p = mean, m
    else:
        w = R - L
        pr = np.clip((mean - L) / np.where(w > 0, w, 1.0), 0.0, 1.0)
        v, p = np.concatenate([L, R]), np.concatenate([m * (1.0 - pr), m * pr])
    v = np.concatenate([vals, v])
    p = np.concatenate([probs, p])
    keep = p > 0.0
    v, p = v[keep], p[keep]
    uniq, inv = np.unique(v, return_inverse=True)
    return uniq, np.bincount(inv.ravel(), weights=p, minlength=uniq.size)


def upper_mode(mode: str) -> bool:
    """True for an upper-bound ``mode``, False for a lower-bound one; ParameterError('mode') otherwise."""
    return _is_upper(mode)


def convex_law(gparv: Gparv, n: int, upper: bool, cells_piece: int | None = None,
               cells_uniform: int | None = None):
    """``(values, probs, scale)``: the finite law of :func:`convex_order_atoms` (side ``upper``, the given cells)
    conditioned on the terms that can make the sum positive (:func:`_conditioned`)."""
    side = "upper" if upper else "lower"
    return _conditioned(*convex_order_atoms(gparv, n, side, cells_piece, cells_uniform), n, upper)


def convex_enumerated_law(gparv: Gparv, n: int, upper: bool, kmax: int):
    """A convex-order law of at most ``kmax`` atoms (``(values, probs, scale)`` as :func:`convex_law`), for the
    multinomial enumeration at small n: ``kmax // 3`` cells per piece and as many equal-width cells, coarsened
    (x0.7, at least 2) until the conditioned law fits; None when even 2 cells give more than ``kmax`` atoms."""
    cells = max(2, kmax // 3)
    law = None
    for _ in range(8):
        law = convex_law(gparv, n, upper, cells, cells)
        if law[0].size <= kmax or cells == 2:
            break
        cells = max(2, int(cells * 0.7))
    return law if law[0].size <= kmax else None


def convex_zero(gparv: Gparv, mode: str) -> Evaluation | None:
    """The answer of the convex-order evaluators when it is immediate: G <= 0 surely (δ = 0), else None."""
    if gparv.support[1] <= 0.0:
        return Evaluation(0.0, "upper" if _is_upper(mode) else "lower", 0.0, "exact", ExactDetail(0.0, 0))
    return None


def convex_evaluation(gparv, n: int, law, upper: bool, coarse: bool, rtol: float | None = None,
                      enumerate_max: int | None = None, max_work: float | None = None) -> Evaluation:
    r"""Certified :math:`\tfrac1n E[(\sum G_i)_+]` from the convex-order law ``law`` (``(values, probs, scale)``
    of :func:`convex_law` / :func:`convex_enumerated_law` for ``gparv``, side ``upper``): the zero split
    (:func:`_zero_split`), else the finite law's exact evaluator (:func:`_positive_part`) at ``rtol`` (default
    :data:`CONVEX_RTOL`), retried at ``DEFAULT_RTOL`` when its error bound exceeds :data:`CONVEX_RETRY_ERR` of
    the value, and, for the default law (``coarse``) at the default ``rtol`` when the integral took at most
    :data:`CONVEX_FINE_NODES` nodes, redone on the finer law of :data:`CONVEX_FINE_UNIFORM` equal-width cells.
    Each Bromwich integral is capped at ``max_work`` atom-frequency evaluations (ResourceLimitError beyond,
    carrying ``nodes_needed``; None: :func:`work_cap` only).  The convex-order step only moves δ in the
    certified direction (:func:`convex_order_atoms`), so the result is certified on its side.
    """
    rtol_given = rtol
    rtol = CONVEX_RTOL if rtol is None else rtol
    enumerate_max = ENUMERATE_MAX if enumerate_max is None else enumerate_max
    side = "upper" if upper else "lower"
    n = int(n)
    v, p, scale = law
    split = _zero_split(v, p, n, upper, rtol, enumerate_max, max_work)
    if split is not None:
        value, err = split
        value, err = value * scale, err * scale
        d = value + err if upper else max(value - err, 0.0)
        if upper and d <= 0.0:
            d = float(np.nextafter(0.0, 1.0))
        return Evaluation(min(d, 1.0) if upper else d, side, err, "enumeration", ExactDetail(0.0, 0))
    K = LogMgf(v, p)
    value, err, nodes, theta, how = _positive_part(K, n, rtol, enumerate_max, max_work)
    if nodes and err > CONVEX_RETRY_ERR * value and rtol > DEFAULT_RTOL:
        # the integral stopped with a large error bound (atoms dominating the tilted law): the
        # evaluator's own default accuracy target, at about 3x the nodes
        value, err, nodes, theta, how = _positive_part(K, n, DEFAULT_RTOL, enumerate_max, max_work)
    elif coarse and rtol_given is None and 0 < nodes <= CONVEX_FINE_NODES:
        # a narrow bell (large n): a finer law at the evaluator's default accuracy costs little
        v, p, scale = _conditioned(*convex_order_atoms(gparv, n, side, None, CONVEX_FINE_UNIFORM), n, upper)
        value, err, nodes, theta, how = _positive_part(LogMgf(v, p), n, DEFAULT_RTOL, enumerate_max, max_work)
    value, err = value * scale, err * scale
    d = value + err if upper else max(value - err, 0.0)
    if upper and d <= 0.0:
        d = float(np.nextafter(0.0, 1.0))
    return Evaluation(min(d, 1.0) if upper else d, side, err, how, ExactDetail(theta, nodes))


#: Coarse laws for the binomial-mixture sums (at most 7 atoms): (kink order, cells) of
#: :func:`convex_order_atoms` ...
CONVEX_COARSE_MIXTURE = ((2, 1), (1, 2), (1, 1), (0, 2), (0, 1))
#: ... each within this many steps of the mixture sums ...
CONVEX_COARSE_STEPS = 2e6
#: ... and, for n <= CONVEX_COARSE_MITM_N, the finest of these cell counts whose law the meet-in-the-middle
#: enumeration evaluates within CONVEX_COARSE_POINTS points.
CONVEX_COARSE_CELLS = (16, 12, 8, 6, 4, 3, 2, 1)
CONVEX_COARSE_MITM_N = 64
CONVEX_COARSE_POINTS = 2.5e5


def coarse_convex(gparv: Gparv, n: int, upper: bool):
    r"""Best certified :math:`\tfrac1n E[(\sum G_i)_+]` over a few coarse convex-order laws evaluated exactly:
    an :class:`Evaluation` (as :func:`delta_exact` builds it, :func:`_exact_result`), or None when none of
    them is evaluated.

    Every law of :func:`convex_order_atoms` is on the certified side for any cells (a mean-preserving spread
    for ``upper``, cell conditional means otherwise; Jensen's inequality applies to any partition of the
    support, atoms included), so the minimum (upper) or maximum (lower) over several is certified.  The
    laws are conditioned as in :func:`_conditioned` and evaluated by the exact binomial-mixture sums (at most
    7 atoms, ``kernels.mixture_positive_part``) or, for ``n <= CONVEX_COARSE_MITM_N``, by the
    meet-in-the-middle enumeration (``kernels.small_n_positive_part``), both with their rounding charged;
    their cost is bounded a priori (CONVEX_COARSE_STEPS, CONVEX_COARSE_POINTS), independent of the load.
    The coarse cells cost tightness (a few per cent of δ near the answer, more far below the target), never
    soundness.
    """
    side = "upper" if upper else "lower"
    best = None

    def consider(value, err, how, positive=True):
        # error added (upper) / subtracted (lower) as delta_exact does; positive: an upper stays above 0
        nonlocal best
        ev = _exact_result(value, err, 0, 0.0, how, upper, positive)
        if best is None or (ev.delta < best.delta if upper else ev.delta > best.delta):
            best = ev

    for ko, cells in CONVEX_COARSE_MIXTURE:
        v, p, scale = _conditioned(*convex_order_atoms(gparv, n, side, cells, cells, ko), n, upper, True)
        if v.size > 7:
            continue
        if float(v.max()) <= 0.0:           # S <= 0 surely: E[S_+] = 0 (both sides)
            consider(0.0, 0.0, "exact", positive=False)
            continue
        if float(v.min()) >= 0.0:           # S >= 0 surely: E[S_+] / n = E[G]
            pn = p / p.sum()
            m = float(pn @ v)
            consider(m * scale, 4.0 * _DBL_EPS * v.size * m * scale, "exact")
            continue
        ok, value, err, _ = kernels.mixture_positive_part(
            np.ascontiguousarray(v), np.ascontiguousarray(p / p.sum()), float(n), 1.0, CONVEX_COARSE_STEPS, True)
        if ok:
            consider(value * scale, err * scale, "binomial-mixture")
    if 2 <= n <= CONVEX_COARSE_MITM_N:
        for cells in CONVEX_COARSE_CELLS:
            v, p, scale = _conditioned(*convex_order_atoms(gparv, n, side, cells, cells), n, upper, True)
            if _small_n_points(n, v.size) > CONVEX_COARSE_POINTS:
                continue
            if float(v.max()) <= 0.0:
                consider(0.0, 0.0, "exact", positive=False)
                break
            tot, err, status = kernels.small_n_positive_part(
                np.ascontiguousarray(v), np.ascontiguousarray(p / p.sum()), int(n), CONVEX_COARSE_POINTS)
            if status == 0:
                consider(tot / n * scale, err / n * scale, "enumeration")
            break
    return best


#: When the integral of the default law took at most this many nodes (a narrow bell, typically large
#: n), it is redone with CONVEX_FINE_UNIFORM equal-width cells at the evaluator's default accuracy.
CONVEX_FINE_NODES = 2000
CONVEX_FINE_UNIFORM = 512
def enumerable_atoms(n: int, enumerate_max: int, max_atoms: int) -> int:
    """Largest number of atoms k (<= ``max_atoms``) whose n-fold multinomial sum has at most ``enumerate_max``
    count vectors (0 if none): the size of a law the enumeration evaluates at this n (a cost estimate)."""
    k = 0
    while k < max_atoms and enumerate_max and math.comb(n + k, k) <= enumerate_max:
        k += 1
    return k


def _conditioned(v: np.ndarray, p: np.ndarray, n: int, upper: bool, always: bool = False):
    r"""``(values, probs, scale)`` with :math:`E[(\sum_{i\le n} G_i)_+] = 	ext{scale}\cdot E[(\sum G'_i)_+]`.

    An atom :math:`v \le a = -(n-1)\max G` forces :math:`\sum G_i \le a + (n-1)\max G \le 0`, so only
    samples with every term above ``a`` contribute: :math:`E[S_+] = q^n E[S'_+]` with
    :math:`q = P(G > a)` and :math:`G' = G \mid G > a` (exact).  ``scale`` is :math:`q^n` rounded up
    (``upper``) or down.  The law is returned unchanged (scale 1) when :math:`E[G'] \ge 0` (the Bromwich
    integral needs a saddle point), unless ``always`` (for the exact sums, which do not).
    """
    top = float(v.max())
    keep = v > -(n - 1) * top
    if keep.all() or not keep.any() or (not always and float(v[keep] @ p[keep]) >= 0.0):
        # nothing to drop, or the conditioned law has a non-negative mean (no saddle point for the
        # Bromwich integral): keep the law as it is
        return v, p, 1.0
    tot = math.fsum(p)
    q = math.fsum(p[keep]) / tot
    slack = 8.0 * _DBL_EPS * (v.size + 4)
    q = min(q * (1.0 + slack), 1.0) if upper else q * (1.0 - slack)
    scale = math.exp(n * math.log(q)) if q > 0.0 else 0.0
    scale = scale * (1.0 + 4.0 * _DBL_EPS) if upper else scale * (1.0 - 4.0 * _DBL_EPS)
    return v[keep], p[keep], scale


#: Split on the atom at 0 (binomial number of non-zero terms) when it is the heaviest and carries at least
#: this mass ...
ZERO_SPLIT_MASS = 0.5
#: ... using at most this many terms of the binomial sum (checked beforehand from its mean and spread).
ZERO_SPLIT_TERMS = 24


def _zero_split(v: np.ndarray, p: np.ndarray, n: int, upper: bool, rtol: float, enumerate_max: int,
                max_work: float | None = None):
    r"""``(value, error)`` of :math:`E[S_+]/n` by the number :math:`J \sim \mathrm{Bin}(n, \pi)` of terms off the
    heaviest atom :math:`x_0` (mass :math:`1 - \pi`), or None unless that atom is at :math:`x_0 = 0` (then the
    shifts below vanish and cost no rounding) with mass >= ZERO_SPLIT_MASS and few other terms are expected.

    :math:`E[S_+] = \sum_{j\ge 1} P(J=j)\,E[((n-j)x_0 + Y_1+\dots+Y_j)_+]` with :math:`Y = G \mid G \ne x_0`
    (the :math:`j = 0` term is :math:`(n x_0)_+ = 0`).  Each term is the positive part of a sum of j
    i.i.d. copies of :math:`Y + (n-j)x_0/j`, evaluated as a finite law (enumeration for small j, else the
    Bromwich integral), with the rounding of the shift charged.  The terms :math:`j > j^*` are charged
    to the upper bound by :math:`E[((n-j)x_0 + T_j)_+] \le E[(T_j)_+] \le j E[Y_+]`, i.e.
    :math:`E[Y_+]\,E[J; J > j^*] = E[Y_+]\,n\pi\,P(\mathrm{Bin}(n-1, \pi) \ge j^*)`; the lower bound drops
    them.  A heavy atom dominates the tilted law of the Bromwich integral (whose integrand then barely
    decays); the split removes it.  ``max_work`` caps the atom-frequency evaluations of all its terms
    together (ResourceLimitError beyond, as :func:`_bromwich`).
    """
    from scipy.special import bdtrc

    if n < 2 or v.size < 2:
        return None
    tot = math.fsum(p)
    i0 = int(np.argmax(p))
    x0 = float(v[i0])
    p0 = float(p[i0]) / tot
    pi = 1.0 - p0
    if x0 != 0.0 or p0 < ZERO_SPLIT_MASS or pi <= 0.0:
        return None
    mean_j = n * pi
    if min(n, mean_j + 6.0 * math.sqrt(mean_j) + 5.0) > ZERO_SPLIT_TERMS:
        return None
    keep = np.ones(v.size, dtype=bool)
    keep[i0] = False
    y, w = v[keep], p[keep]
    wn = w / w.sum()
    ypos = float(wn @ np.maximum(y, 0.0)) * (1.0 + 8.0 * _DBL_EPS * y.size)
    if ypos <= 0.0:
        return 0.0, 0.0
    ymax = float(np.max(np.abs(y)))
    rel = 1e-12                           # relative accuracy allowed for the binomial pmf / tail
    total, err, work = 0.0, 0.0, 0.0
    j = 0
    bj = math.exp(n * math.log1p(-pi))    # P(J = 0), then P(J = j) by the ratio recursion
    odds = pi / p0
    while True:
        j += 1
        bj = bj * (n - j + 1) / j * odds
        c = (n - j) * x0
        shift_err = 8.0 * _DBL_EPS * (j * ymax + abs(c)) * (1.0 + j)     # rounding of y + c/j and of the sums
        if j == 1:
            vj = float(wn @ np.maximum(y + c, 0.0))
            ej = 8.0 * _DBL_EPS * y.size * (vj + ymax + abs(c))
        else:
            yj = y + c / j
            if yj.max() <= 0.0:
                vj, ej = 0.0, 0.0
            else:
                if max_work is not None:
                    work += _enumeration_work(yj, j, enumerate_max)
                    if work > max_work:
                        raise ResourceLimitError(f"zero split: more than {max_work:.0e} units of work (n={n})")
                cap = None if max_work is None else max(max_work - work, 1.0)
                vj, ej, nodes, _, _ = _positive_part(LogMgf(yj, w), j, rtol, enumerate_max, cap)
                work += float(nodes) * yj.size
                vj, ej = j * vj, j * ej + shift_err
        total += bj * vj
        err += bj * ej + rel * bj * (vj + ej)
        tail = ypos * n * pi * float(bdtrc(j - 1, n - 1, pi)) * (1.0 + rel)
        if j >= n or tail <= rtol * total:
            break
        if j >= ZERO_SPLIT_TERMS:
            return None
    if upper:
        err += tail
    return total / n, err / n


def continuous_law(gparv: Gparv, n: int) -> "_MixedLaw":
    """The law the continuous-part Bromwich integral integrates (atoms plus the continuous part's nodes and
    closed-form MGF) for ``n`` users; its saddle point and bell width give the integral's cost
    (:func:`bromwich_work`).  ``gparv`` must be supported (:func:`unsupported_reason`) with a positive atom."""
    return _MixedLaw(gparv, int(n))


def mgf_exponent(law, gparv: Gparv) -> float:
    """Tilt x width of the continuous part: the closed-form MGF at the tilt overflows beyond about e^600
    (inf for a non-finite tilt)."""
    c = gparv.continuous
    return law.theta * (float(c.hi) - float(c.lo)) if math.isfinite(law.theta) else math.inf


def delta_continuous_bromwich(law, n: int, mode: str, max_work: float) -> Evaluation:
    """Certified δ of the continuous-part Bromwich integral on ``law`` (:func:`continuous_law`), within
    ``max_work`` atom-frequency evaluations (ResourceLimitError beyond): :func:`delta_exact`'s continuous
    branch at ``DEFAULT_RTOL``, error charged on the side of ``mode``."""
    return _exact_result(*_bromwich(law, int(n), DEFAULT_RTOL, max_work), _is_upper(mode), True)
