r"""Gradual release of k-ary randomized response, and its local and shuffled accounting.

A client holding a fixed value :math:`x \in \{0, \dots, k-1\}` first releases an
:math:`\epsilon_1` k-RR report :math:`o_1`.  When its budget grows to
:math:`\epsilon_2 \ge \epsilon_1` it releases :math:`o_2 \sim \Pr(o_2 \mid o_1, x)` through Pan's
*relaxation kernel*, and so on along a public non-decreasing schedule
:math:`\epsilon_1 \le \dots \le \epsilon_T` (Pan 2024, Algorithm 1, Eq. (54); Theorem 3.1 for
k = 2 and Theorem 3.2 for k >= 3).  Each :math:`o_t` is exactly an :math:`\epsilon_t` k-RR report
of :math:`x` (Theorems 3.3 and 3.4), and the whole history :math:`(o_1, \dots, o_t)` is only
:math:`\epsilon_t`-LDP (Lemma 3.1, Theorem 3.5), not :math:`\sum_s \epsilon_s`.

Conventions
-----------
Values, true values and reports are **0-based** integers ``0 .. k-1`` (the paper writes
:math:`[m] = \{1, \dots, m\}`; here ``k`` is the paper's ``m``).  ε is in nats; every ε must be
finite, ``> 0`` and ``<= 700``.  Histories are int64 arrays of shape ``(T, n)``: row ``t`` holds
round ``t``'s reports of the ``n`` users.

Kernel (Pan 2024, Eq. (54), written in a cancellation-free form derived here)
------------------------------------------------------------------------------
With :math:`a = x`, :math:`b = o_{t-1} \ne a`, :math:`E_t = e^{\epsilon_t}`,
:math:`D_t = E_t + k - 1`, :math:`g = \operatorname{expm1}(\epsilon_t - \epsilon_{t-1})` and
:math:`d = \operatorname{expm1}(\epsilon_t)`, the three free probabilities of Eq. (54) are

* move away from a correct report: :math:`1 - p_{aa} = (k-1)\,g / (d\,D_t)`, uniformly to one of the
  other :math:`k-1` values (Eq. (28));
* jump from a wrong report to the truth: :math:`p_{ba} = (E_t/d)\,(E_{t-1}/D_t)\,g`;
* move from a wrong report to a third value: :math:`1 - p_{ba} - p_{bb} = (k-2)\,E_{t-1}\,g/(d\,D_t)`,
  uniformly over the :math:`k-2` values other than :math:`a, b` (Eq. (31); zero for k = 2);
* stay on a wrong report: :math:`p_{bb} = (E_{t-1}\,d + (k-1)\operatorname{expm1}(\epsilon_{t-1}))/(d\,D_t)`.

These equal Eq. (54) (and Eqs. (22)-(23) at k = 2) algebraically; the paper's Eq. (107)-(110) give
the same differences.  The k-RR law itself is Eq. (5) with the denominator
:math:`e^{\epsilon} + k - 1` (the paper's typeset ``e^{\epsilon+m-1}`` is a typo).  At
:math:`\epsilon_t = \epsilon_{t-1}` the kernel is the identity: the report is never re-randomised.

Shuffled accounting (derived here)
----------------------------------
Let every user ``u`` run the chain on its fixed ``x_u`` with the same public, data-independent
schedule and independent randomness, producing :math:`H_u = (o_{u,1}, \dots, o_{u,T})`.  Write
:math:`R_\epsilon(y \mid x)` for the ε k-RR law and
:math:`D_{e^\epsilon}(P \| Q) = \sum_s (P(s) - e^\epsilon Q(s))_+` for the hockey-stick divergence.
Neighbouring datasets differ in one user's value (replace-one), as for the shuffle bounds.

**Step 1 (factorisation).**  Lemma 3.1 of Pan (2024) states that for every history ``h`` and all
values :math:`x, x'`,
:math:`\Pr(h \mid x)/\Pr(h \mid x') = R_{\epsilon_T}(h_T \mid x)/R_{\epsilon_T}(h_T \mid x')`.
All probabilities are positive (finite ε), so :math:`g(h) := \Pr(h \mid 0) / R_{\epsilon_T}(h_T \mid 0)`
is well defined and does not depend on ``x``, and :math:`\Pr(h \mid x) = R_{\epsilon_T}(h_T \mid x)\,g(h)`
for every ``x``.  Summing over the histories with :math:`h_T = y` and using Theorem 3.4
(the marginal of :math:`o_T` is exactly :math:`R_{\epsilon_T}(\cdot \mid x)`) gives
:math:`\sum_{h : h_T = y} g(h) = 1`.  Hence :math:`K(h \mid y) := g(h)\,[h_T = y]` is a Markov kernel
from :math:`\{0..k-1\}` to histories that does not depend on the data, and

.. math:: \Pr(H = h \mid x) = \sum_y R_{\epsilon_T}(y \mid x)\, K(h \mid y).

So the history is in law an :math:`\epsilon_T` k-RR report followed by the data-independent
post-processing ``K``; conversely the report :math:`o_T` is the last coordinate of the history.

**Step 2 (shuffled tuples = one shuffled ε_T round, both directions).**  Let :math:`S_{tup}` be the
multiset :math:`\{H_1, \dots, H_n\}` (histories shuffled as linkable tuples) and :math:`S_T` the
multiset :math:`\{o_{1,T}, \dots, o_{n,T}\}` (one shuffled :math:`\epsilon_T` k-RR round).
Given :math:`S_T`, replace each of its elements ``y`` by an independent draw from
:math:`K(\cdot \mid y)` and take the multiset: because the users' pairs :math:`(o_{u,T}, H_u)` are
independent and :math:`H_u \mid o_{u,T} \sim K(\cdot \mid o_{u,T})` whatever :math:`x_u`, this
yields exactly the law of :math:`S_{tup}`, with a kernel that does not depend on the data.
Conversely :math:`S_T` is the multiset of the last coordinates of :math:`S_{tup}`.  By the
post-processing inequality of the hockey-stick divergence, applied both ways, for every pair of
datasets :math:`X^0, X^1` and every ε:
:math:`D_{e^\epsilon}(S_{tup}(X^0) \| S_{tup}(X^1)) = D_{e^\epsilon}(S_T(X^0) \| S_T(X^1))`.

**Step 3 (rounds shuffled separately: the same profile).**  Let :math:`S_{sep}` be the tuple of
the T per-round multisets.  It is a deterministic function of :math:`S_{tup}` (project every
history on round ``t``, take multisets), so its divergence is at most that of :math:`S_{tup}`;
and :math:`S_T` is its last component, so its divergence is at least that of :math:`S_T`.  With
Step 2 all three are equal.  The same holds for everything released up to any round ``t``
(replace ``T`` by ``t``).

**Consequence.**  The central :math:`(\epsilon, \delta)` of the whole schedule, shuffled as tuples
or round by round, is *exactly* the privacy profile of one shuffled :math:`\epsilon_T` k-RR round,
so the certified upper bound of Su, Cheng and Wang for ``KRR(schedule[-1], k)`` applies and its
certified lower bound (a concrete neighbouring pair) is attained too.  Fresh k-RR rounds at
:math:`\epsilon_1, \dots, \epsilon_T` would instead compose.  Conditions: each user's value is
fixed over the schedule; the schedule is public, the same for all users and independent of the
data (a schedule chosen from public aggregates is fine, Lemma 3.1 holding pointwise); users use
independent randomness; participation does not depend on the data; no round is released with
identities.

References
----------
.. [1] M. Pan, "Randomized Response with Gradual Release of Privacy Budget", arXiv:2401.13952, 2024.
   Eq. (5) (k-RR), Eqs. (6)-(8) (frequency estimators), Theorems 3.1-3.5, Lemma 3.1, Eq. (54)
   (kernel), Eq. (67) and Appendix G Eqs. (135)-(141) (variances), Theorem 6.1 (Bayes error).
.. [2] P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
   Shuffling", IEEE S&P 2026 (short version: "A Unified Framework and Efficient Computation for
   Privacy Amplification via Shuffling", arXiv:2504.07414).
.. [3] A. Koufogiannis, S. Han, G. J. Pappas, "Gradual Release of Sensitive Data under Differential
   Privacy", Journal of Privacy and Confidentiality 7(2), 2017 (the continuous analogue).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from . import _validate
from .errors import ParameterError

__all__ = ["RelaxKernel", "relax_kernel", "transition_matrix", "sample_krr", "relax", "sample_history",
           "history_log_likelihood", "local_epsilon", "estimate_frequencies", "frequency_covariance",
           "frequency_variance", "bayes_error", "GradualRelease"]

#: Largest ε accepted (as for :class:`shuffleamp.mechanisms.KRR`): keeps exp(ε) finite.
EPS_MAX = 700.0


# ----------------------------------------------------------------------------------------------
# input checks
# ----------------------------------------------------------------------------------------------

def _eps(value, name: str):
    """ε in nats: finite, > 0, <= EPS_MAX; float or float64 array."""
    return _validate.real(name, value, lo=0.0, lo_open=True, hi=EPS_MAX)


def _k(value, name: str = "k") -> int:
    return _validate.count(value, name, minimum=2)


def _values(value, name: str, k: int) -> np.ndarray:
    """An array of 0-based values in 0..k-1 (integers or integral floats); int64 copy."""
    arr = np.asarray(value)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ParameterError(name, f"must be an array of integers in 0..{k - 1}, got dtype {arr.dtype}")
    if arr.size == 0:
        raise ParameterError(name, "must not be empty")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.isfinite(arr).all():
            raise ParameterError(name, "must not contain NaN or infinities")
        if (arr != np.round(arr)).any():
            raise ParameterError(name, f"must be integers, got {arr[arr != np.round(arr)].flat[0]!r}")
    bad = (arr < 0) | (arr > k - 1)
    if bad.any():
        raise ParameterError(name, f"values must lie in 0..{k - 1} (0-based), got {arr[bad].flat[0]!r}")
    return arr.astype(np.int64)


def _schedule(value, name: str = "schedule") -> np.ndarray:
    """A non-empty 1-D non-decreasing array of ε values in (0, EPS_MAX]."""
    arr = _validate.real(name, value, lo=0.0, lo_open=True, hi=EPS_MAX)
    arr = np.atleast_1d(np.asarray(arr, dtype=np.float64))
    if arr.ndim != 1:
        raise ParameterError(name, f"must be a 1-D sequence of ε values, got shape {arr.shape}")
    drop = np.nonzero(np.diff(arr) < 0)[0]
    if drop.size:
        i = int(drop[0])
        raise ParameterError(name, f"must be non-decreasing (budgets are only released, never taken back), "
                                   f"but entry {i + 1} ({float(arr[i + 1])!r}) < entry {i} ({float(arr[i])!r})")
    return arr


def _same_shape(name: str, arr: np.ndarray, ref_name: str, ref: np.ndarray) -> None:
    if arr.shape != ref.shape:
        raise ParameterError(name, f"shape {arr.shape} does not match the shape {ref.shape} of {ref_name!r}")


def _eps_like(value, name: str, shape) -> np.ndarray:
    """A scalar ε, or an ε array broadcastable to ``shape`` (per-user schedules)."""
    e = np.asarray(_eps(value, name), dtype=np.float64)
    try:
        return np.broadcast_to(e, shape)
    except ValueError:
        raise ParameterError(name, f"shape {e.shape} cannot be broadcast to the users' shape {shape}") from None


# ----------------------------------------------------------------------------------------------
# kernel
# ----------------------------------------------------------------------------------------------

class RelaxKernel(NamedTuple):
    """Probabilities of one relaxation step (Pan 2024, Eq. (54)); floats or float64 arrays.

    Attributes
    ----------
    move_correct : 1 - p_aa, total probability of leaving a correct previous report (spread
        uniformly over the k - 1 other values).
    p_ba : probability of jumping from a wrong previous report to the true value.
    p_bb : probability of keeping a wrong previous report.
    move_third : 1 - p_ba - p_bb, total probability of moving from a wrong report to a value that
        is neither the truth nor the previous report (spread over k - 2 values; 0 for k = 2).
    """

    move_correct: object
    p_ba: object
    p_bb: object
    move_third: object

    @property
    def p_aa(self):
        """Probability of keeping a correct previous report, 1 - ``move_correct``."""
        return 1.0 - self.move_correct


def _kernel(eps_prev, eps_new, k: int) -> RelaxKernel:
    """Unchecked kernel (vectorised over eps arrays)."""
    g = np.expm1(eps_new - eps_prev)
    d = np.expm1(eps_new)
    e_prev = np.exp(eps_prev)
    big_d = np.exp(eps_new) + (k - 1)
    g_over_d = g / d
    # p_bb = (E_prev d + (k-1) expm1(eps_prev)) / (d D), divided through by d (no overflow);
    # exactly 1 at eps_new == eps_prev (identity kernel).
    p_bb = np.where(g == 0, 1.0, (e_prev + (k - 1) * np.expm1(eps_prev) / d) / big_d)
    return RelaxKernel(move_correct=(k - 1) * g_over_d / big_d,
                       p_ba=(np.exp(eps_new) / d) * (e_prev / big_d) * g,
                       p_bb=p_bb,
                       move_third=(k - 2) * e_prev * g_over_d / big_d)


def _krr_move(eps, k: int):
    """Probability that an ε k-RR report differs from the truth, (k-1)/(e^ε+k-1) (Pan 2024, Eq. (5))."""
    return (k - 1) / (np.exp(eps) + (k - 1))


def relax_kernel(eps_prev, eps_new, k) -> RelaxKernel:
    r"""The relaxation kernel from ``eps_prev`` to ``eps_new`` on k values.

    Parameters
    ----------
    eps_prev, eps_new : float or array_like of float
        Previous and new ε in nats, ``0 < eps_prev <= eps_new <= 700`` (broadcast together).
    k : int
        Domain size, ``k >= 2`` (the paper's ``m``).

    Returns
    -------
    RelaxKernel
        ``(move_correct, p_ba, p_bb, move_third)``; floats, or arrays of the broadcast shape.
        ``p_aa = 1 - move_correct``; ``p_ba + p_bb + move_third = 1``.

    Raises
    ------
    ParameterError
        ``'eps_prev'`` / ``'eps_new'`` NaN, ``<= 0`` or ``> 700``; ``'eps_new'`` below
        ``'eps_prev'``; ``'k'`` not an integer ``>= 2``.

    References
    ----------
    M. Pan, "Randomized Response with Gradual Release of Privacy Budget", arXiv:2401.13952, 2024:
    Eq. (54) and Theorem 3.3 (Theorem 3.1, Eqs. (22)-(23), for k = 2; Theorem 3.2, Eq. (50)).
    """
    k = _k(k)
    ep = np.asarray(_eps(eps_prev, "eps_prev"), dtype=np.float64)
    en = np.asarray(_eps(eps_new, "eps_new"), dtype=np.float64)
    ep, en = np.broadcast_arrays(ep, en)
    if (en < ep).any():
        i = np.argmax(en < ep)
        raise ParameterError("eps_new", f"must be >= eps_prev (a budget is never taken back), got "
                                        f"{en.flat[i]!r} < {ep.flat[i]!r}")
    ker = _kernel(ep, en, k)
    if ep.ndim == 0:
        return RelaxKernel(*(float(v) for v in ker))
    return ker


def transition_matrix(eps_prev, eps_new, k, x) -> np.ndarray:
    r"""The kernel as a matrix ``T[o_prev, o_new] = Pr(o_new | o_prev, x)``.

    Parameters
    ----------
    eps_prev, eps_new : float
        Previous and new ε in nats, ``0 < eps_prev <= eps_new <= 700``.
    k : int
        Domain size, ``k >= 2``.
    x : int
        True value, 0-based (``0 <= x < k``).

    Returns
    -------
    ndarray of float64, shape (k, k)
        Row-stochastic transition matrix.

    Raises
    ------
    ParameterError
        As :func:`relax_kernel`; ``'x'`` outside ``0..k-1``.

    References
    ----------
    M. Pan, arXiv:2401.13952, 2024, Eqs. (27)-(31) and (54).
    """
    ker = relax_kernel(eps_prev, eps_new, k)
    k = int(k)
    x = int(_values(x, "x", k))
    T = np.empty((k, k))
    for b in range(k):  # k x k matrix: loops over values, not users
        if b == x:
            T[b, :] = ker.move_correct / (k - 1)
            T[b, x] = ker.p_aa
        else:
            T[b, :] = ker.move_third / (k - 2) if k > 2 else 0.0
            T[b, x] = ker.p_ba
            T[b, b] = ker.p_bb
    return T


# ----------------------------------------------------------------------------------------------
# samplers (vectorised over users)
# ----------------------------------------------------------------------------------------------

def _other_than(x, r):
    """Map r in 0..k-2 to the r-th value other than x (uniform if r is)."""
    return r + (r >= x)


def _other_than_two(x, o, r):
    """Map r in 0..k-3 to the r-th value other than x and o (x != o)."""
    lo = np.minimum(x, o)
    hi = np.maximum(x, o)
    c = r + (r >= lo)
    return c + (c >= hi)


def _generator(rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise ParameterError("rng", f"must be a numpy Generator, an integer seed or None, got {type(rng).__name__}")


def _krr_draw(x, eps, k, gen):
    u = gen.random(x.shape)
    r = gen.integers(0, k - 1, size=x.shape)
    return np.where(u < _krr_move(eps, k), _other_than(x, r), x)


def _relax_draw(x, prev, eps_prev, eps_new, k, gen):
    ker = _kernel(eps_prev, eps_new, k)
    u = gen.random(x.shape)
    r = gen.integers(0, k - 1, size=x.shape)
    correct = prev == x
    # correct previous report: leave with probability move_correct, uniformly to another value
    out_correct = np.where(u < ker.move_correct, _other_than(x, r), x)
    if k > 2:
        r3 = gen.integers(0, k - 2, size=x.shape)
        third = _other_than_two(x, prev, r3)
        # wrong previous report: truth w.p. p_ba, a third value w.p. move_third, else stay
        out_wrong = np.where(u < ker.p_ba, x, np.where(u < ker.p_ba + ker.move_third, third, prev))
    else:
        out_wrong = np.where(u < ker.p_ba, x, prev)
    return np.where(correct, out_correct, out_wrong)


def sample_krr(values, eps, k, rng=None) -> np.ndarray:
    r"""Fresh ε k-RR reports of the given true values (the first round of a gradual release).

    Parameters
    ----------
    values : array_like of int
        True values, 0-based in ``0..k-1``; any shape.
    eps : float or array_like of float
        ε in nats, ``0 < eps <= 700``; a scalar or an array broadcastable to ``values``.
    k : int
        Domain size, ``k >= 2``.
    rng : numpy.random.Generator or int or None
        Randomness (a seed builds ``numpy.random.default_rng(seed)``).

    Returns
    -------
    ndarray of int64, shape of ``values``
        Reports; ``Pr(y = x) = e^ε/(e^ε+k-1)``, every other value ``1/(e^ε+k-1)``.

    Raises
    ------
    ParameterError
        ``'values'`` outside ``0..k-1``; ``'eps'`` NaN / ``<= 0`` / ``> 700`` / wrong shape;
        ``'k'`` below 2; ``'rng'`` of the wrong type.

    References
    ----------
    M. Pan, arXiv:2401.13952, 2024, Eq. (5) (denominator e^ε + m - 1).
    """
    k = _k(k)
    x = _values(values, "values", k)
    e = _eps_like(eps, "eps", x.shape)
    return _krr_draw(x, e, k, _generator(rng))


def relax(values, previous, eps_prev, eps_new, k, rng=None) -> np.ndarray:
    r"""One relaxation step for many users: the next reports given the previous ones.

    If ``previous`` is distributed as an ``eps_prev`` k-RR report of ``values``, the result is
    distributed exactly as a fresh ``eps_new`` k-RR report (Theorem 3.3), and the pair is only
    ``eps_new``-LDP.  Where ``eps_new == eps_prev`` the previous report is returned unchanged.

    Parameters
    ----------
    values : array_like of int
        True values, 0-based in ``0..k-1``; any shape.
    previous : array_like of int
        Previous reports, 0-based in ``0..k-1``; same shape as ``values``.
    eps_prev, eps_new : float or array_like of float
        Previous and new ε in nats, ``0 < eps_prev <= eps_new <= 700``; scalars or arrays
        broadcastable to ``values`` (per-user budgets).
    k : int
        Domain size, ``k >= 2``.
    rng : numpy.random.Generator or int or None
        Randomness.

    Returns
    -------
    ndarray of int64, shape of ``values``
        The new reports.

    Raises
    ------
    ParameterError
        ``'values'`` / ``'previous'`` outside ``0..k-1``; ``'previous'`` of a different shape
        than ``'values'``; ``'eps_prev'`` / ``'eps_new'`` invalid or ``eps_new < eps_prev``;
        ``'k'`` below 2.

    References
    ----------
    M. Pan, arXiv:2401.13952, 2024, Algorithm 1, Eq. (54), Theorems 3.1-3.3.
    """
    k = _k(k)
    x = _values(values, "values", k)
    prev = _values(previous, "previous", k)
    _same_shape("previous", prev, "values", x)
    ep = _eps_like(eps_prev, "eps_prev", x.shape)
    en = _eps_like(eps_new, "eps_new", x.shape)
    if (en < ep).any():
        i = np.argmax(en < ep)
        raise ParameterError("eps_new", f"must be >= eps_prev (a budget is never taken back), got "
                                        f"{en.flat[i]!r} < {ep.flat[i]!r}")
    return _relax_draw(x, prev, ep, en, k, _generator(rng))


def sample_history(values, schedule, k, rng=None) -> np.ndarray:
    r"""The whole gradual-release history of every user along a schedule, in one call.

    Parameters
    ----------
    values : array_like of int, shape (n,)
        True values, 0-based in ``0..k-1``.
    schedule : sequence of float, length T
        ``eps_1 <= eps_2 <= ... <= eps_T`` in nats, each in ``(0, 700]``.
    k : int
        Domain size, ``k >= 2``.
    rng : numpy.random.Generator or int or None
        Randomness.

    Returns
    -------
    ndarray of int64, shape (T, n)
        Row ``t`` holds the round-``t`` reports; row ``t`` is distributed as an ``eps_t`` k-RR
        of ``values`` and rows ``0..t`` together are ``eps_t``-LDP.

    Raises
    ------
    ParameterError
        ``'values'`` outside ``0..k-1`` or not 1-D; ``'schedule'`` empty, NaN, ``<= 0``,
        ``> 700`` or decreasing; ``'k'`` below 2.

    References
    ----------
    M. Pan, arXiv:2401.13952, 2024, Algorithm 1, Theorems 3.4 and 3.5.
    """
    k = _k(k)
    x = _values(values, "values", k)
    if x.ndim != 1:
        raise ParameterError("values", f"must be 1-D (one value per user), got shape {x.shape}")
    sched = _schedule(schedule)
    gen = _generator(rng)
    out = np.empty((sched.size, x.size), dtype=np.int64)
    out[0] = _krr_draw(x, sched[0], k, gen)
    for t in range(1, sched.size):  # loop over rounds only
        out[t] = _relax_draw(x, out[t - 1], sched[t - 1], sched[t], k, gen)
    return out


def history_log_likelihood(history, schedule, k) -> np.ndarray:
    r"""Log-likelihood ``log Pr(o_1..o_T | x)`` of each user's history for every candidate value.

    Parameters
    ----------
    history : array_like of int, shape (T, n)
        Reports, 0-based; row ``t`` is round ``t``.
    schedule : sequence of float, length T
        The non-decreasing schedule that produced the history.
    k : int
        Domain size, ``k >= 2``.

    Returns
    -------
    ndarray of float64, shape (n, k)
        Entry ``[u, x]`` is the log-probability of user ``u``'s history given true value ``x``
        (Pan 2024, Eq. (4) with the Markov kernel (54)).  Its argmax over ``x`` is the maximum
        likelihood guess, which by Lemma 3.1 is the last report.

    Raises
    ------
    ParameterError
        ``'history'`` not 2-D, of a length other than the schedule's, or outside ``0..k-1``;
        ``'schedule'`` invalid; ``'k'`` below 2.

    References
    ----------
    M. Pan, arXiv:2401.13952, 2024, Eqs. (4), (5), (54); Lemma 3.1.
    """
    k = _k(k)
    sched = _schedule(schedule)
    h = _values(history, "history", k)
    if h.ndim != 2 or h.shape[0] != sched.size:
        raise ParameterError("history", f"must have shape (T, n) with T = len(schedule) = {sched.size}, "
                                        f"got shape {h.shape}")
    cand = np.arange(k)[None, :]                                         # (1, k)
    first = h[0][:, None]                                                # (n, 1)
    move = _krr_move(sched[0], k)
    ll = np.where(first == cand, np.log1p(-move), np.log(move / (k - 1)))
    for t in range(1, sched.size):
        ker = _kernel(sched[t - 1], sched[t], k)
        prev = h[t - 1][:, None]
        new = h[t][:, None]
        correct = prev == cand
        p = np.where(correct,
                     np.where(new == cand, ker.p_aa, ker.move_correct / (k - 1)),
                     np.where(new == cand, ker.p_ba,
                              np.where(new == prev, ker.p_bb, ker.move_third / max(k - 2, 1))))
        with np.errstate(divide="ignore"):
            ll = ll + np.log(p)
    return ll


# ----------------------------------------------------------------------------------------------
# local accounting
# ----------------------------------------------------------------------------------------------

def local_epsilon(schedule) -> float:
    r"""Pure ε-LDP of the whole history released along ``schedule``: its last entry ε_T.

    Parameters
    ----------
    schedule : sequence of float
        ``eps_1 <= ... <= eps_T`` in nats.

    Returns
    -------
    float
        ``eps_T``.  Tight: some histories attain the likelihood ratio ``e^{eps_T}``.

    Raises
    ------
    ParameterError
        ``'schedule'`` empty, NaN, ``<= 0``, ``> 700`` or decreasing.

    References
    ----------
    M. Pan, arXiv:2401.13952, 2024, Lemma 3.1 and Theorem 3.5.
    """
    return float(_schedule(schedule)[-1])


# ----------------------------------------------------------------------------------------------
# estimators
# ----------------------------------------------------------------------------------------------

def _inverse_apply(vec, eps, k):
    """P^{-1} applied along the last axis: (D v - sum(v)) / (e^ε - 1), P the k-RR matrix."""
    big_d = math.exp(eps) + k - 1
    return (big_d * vec - vec.sum(axis=-1, keepdims=True)) / math.expm1(eps)


def estimate_frequencies(reports, eps, k) -> np.ndarray:
    r"""Unbiased estimate of the true value frequencies from one round of ε k-RR reports.

    Works for any round of a gradual release: round ``t`` is an exact ``eps_t`` k-RR round.

    Parameters
    ----------
    reports : array_like of int, shape (..., n)
        Reports, 0-based in ``0..k-1``; leading axes are independent batches (repetitions).
    eps : float
        ε of these reports, nats, ``0 < eps <= 700``.
    k : int
        Domain size, ``k >= 2``.

    Returns
    -------
    ndarray of float64, shape (..., k)
        :math:`\hat\pi = P^{-1}\lambda`, with :math:`\lambda` the normalised histogram of the
        reports and :math:`P^{-1} = (D I - J)/(e^\epsilon - 1)`, :math:`D = e^\epsilon + k - 1`
        (closed form derived here), i.e. :math:`\hat\pi_j = (D\lambda_j - 1)/(e^\epsilon - 1)`.
        For k = 2 this is Eq. (6).  Entries may be negative or exceed 1 (unbiasedness).

    Raises
    ------
    ParameterError
        ``'reports'`` outside ``0..k-1``; ``'eps'`` invalid; ``'k'`` below 2.

    References
    ----------
    M. Pan, arXiv:2401.13952, 2024, Eqs. (6)-(8).
    """
    k = _k(k)
    e = float(_eps(eps, "eps"))
    y = _values(reports, "reports", k)
    y = y.reshape(1, -1) if y.ndim == 1 else y.reshape(-1, y.shape[-1])
    offset = (np.arange(y.shape[0]) * k)[:, None]
    counts = np.bincount((y + offset).ravel(), minlength=y.shape[0] * k).reshape(y.shape[0], k)
    lam = counts / y.shape[1]
    out = _inverse_apply(lam, e, k)
    shape = np.shape(reports)[:-1] + (k,)
    return out.reshape(shape)


def frequency_covariance(frequencies, eps, n) -> np.ndarray:
    r"""Exact covariance matrix of :func:`estimate_frequencies` for a fixed population.

    Parameters
    ----------
    frequencies : array_like of float, shape (k,)
        True frequencies of the values ``0..k-1`` in the population (non-negative, sum 1).
    eps : float
        ε of the round, nats.
    n : int
        Number of reports.

    Returns
    -------
    ndarray of float64, shape (k, k)
        :math:`\frac1n P^{-1} C(f) P^{-1}` where :math:`C(f) = \sum_x f_x \mathrm{Cov}(Y \mid x)` is
        the frequency-weighted one-hot k-RR covariance of Eq. (139) (Eqs. (140)-(141)).  The diagonal
        equals the closed form :math:`(f_j e^\epsilon (k-1) + (1-f_j)(e^\epsilon+k-2))/(n(e^\epsilon-1)^2)`
        (derived here from (139)-(141)); for k = 2 it is Eq. (67), :math:`e^\epsilon/(n(e^\epsilon-1)^2)`.

    Raises
    ------
    ParameterError
        ``'frequencies'`` NaN, negative, not 1-D of length >= 2 or not summing to 1; ``'eps'``
        invalid; ``'n'`` not a positive integer.

    References
    ----------
    M. Pan, arXiv:2401.13952, 2024, Eq. (67) and Appendix G, Eqs. (135)-(141).
    """
    f = np.atleast_1d(np.asarray(_validate.real("frequencies", frequencies, lo=0.0, hi=1.0), dtype=np.float64))
    if f.ndim != 1 or f.size < 2:
        raise ParameterError("frequencies", f"must be a 1-D array of length k >= 2, got shape {f.shape}")
    if abs(f.sum() - 1.0) > 1e-9:
        raise ParameterError("frequencies", f"must sum to 1, got {f.sum()!r}")
    e = float(_eps(eps, "eps"))
    n = _validate.count(n, "n")
    k = f.size
    E = math.exp(e)
    big_d = E + k - 1
    # C(f) of Eq. (139) averaged over the population: off-diagonal -E(f_i+f_j) - (1-f_i-f_j),
    # diagonal E(k-1) f_j + (E+k-2)(1-f_j), all over D^2.
    fi = f[:, None]
    fj = f[None, :]
    C = -(E * (fi + fj) + (1.0 - fi - fj))
    np.fill_diagonal(C, E * (k - 1) * f + (E + k - 2) * (1.0 - f))
    C /= big_d ** 2
    left = _inverse_apply(C, e, k)            # C P^{-1} (P symmetric), row by row
    return _inverse_apply(left.T, e, k) / n   # P^{-1} C P^{-1} / n


def frequency_variance(frequencies, eps, n) -> np.ndarray:
    r"""Variance of each entry of :func:`estimate_frequencies` (diagonal of :func:`frequency_covariance`).

    Parameters
    ----------
    frequencies : array_like of float, shape (k,)
        True frequencies (sum 1).
    eps : float
        ε of the round, nats.
    n : int
        Number of reports.

    Returns
    -------
    ndarray of float64, shape (k,)

    Raises
    ------
    ParameterError
        As :func:`frequency_covariance`.

    References
    ----------
    M. Pan, arXiv:2401.13952, 2024, Eq. (67), Appendix G.
    """
    return np.diag(frequency_covariance(frequencies, eps, n)).copy()


def bayes_error(eps, k):
    r"""Smallest expected error rate of any guess of a uniform true value from an ε k-RR report.

    By Lemma 3.1 the same bound holds for a whole gradual-release history ending at ε.

    Parameters
    ----------
    eps : float or array_like of float
        ε in nats, ``0 < eps <= 700``.
    k : int
        Domain size, ``k >= 2``.

    Returns
    -------
    float or ndarray of float64
        :math:`1 - e^\epsilon/(e^\epsilon + k - 1) = (k-1)/(e^\epsilon + k - 1)`.

    Raises
    ------
    ParameterError
        ``'eps'`` invalid; ``'k'`` below 2.

    References
    ----------
    M. Pan, arXiv:2401.13952, 2024, Theorem 6.1.
    """
    k = _k(k)
    e = _eps(eps, "eps")
    out = _krr_move(e, k)
    return float(out) if np.ndim(out) == 0 else out


# ----------------------------------------------------------------------------------------------
# shuffled accounting
# ----------------------------------------------------------------------------------------------

#: Estimated seconds of one certified ``shuffleamp.epsilon`` of a k-RR round (the cost model of
#: :meth:`GradualRelease.fresh_rounds_epsilon`, one call per distinct schedule value; measured 0.001 s CPU
#: at n = 1e5, bench/results_limits.md).
FRESH_ROUND_SECONDS = 0.005


@dataclass(frozen=True)
class GradualRelease:
    r"""A k-RR gradual release along a public schedule, for local and shuffled accounting.

    Every user releases reports at ``schedule[0] <= ... <= schedule[-1]`` through the relaxation
    kernel.  The whole history (all rounds, shuffled as tuples or round by round) has exactly the
    privacy profile of one shuffled ``KRR(schedule[-1], k)`` round (proved in the module docstring),
    so the central bounds are those of :meth:`final_mechanism`.

    Parameters
    ----------
    k : int
        Domain size, ``k >= 2``.
    schedule : sequence of float
        Non-decreasing ε values in nats, each in ``(0, 700]``; stored as a tuple of floats.

    Raises
    ------
    ParameterError
        ``'k'`` below 2 or not an integer; ``'schedule'`` empty, NaN, ``<= 0``, ``> 700`` or
        decreasing.

    References
    ----------
    M. Pan, arXiv:2401.13952, 2024, Lemma 3.1, Theorems 3.4-3.5.
    P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
    Shuffling", IEEE S&P 2026 (arXiv:2504.07414), for the shuffled k-RR bound.
    """

    k: int
    schedule: tuple

    def __post_init__(self):
        object.__setattr__(self, "k", _k(self.k))
        object.__setattr__(self, "schedule", tuple(float(e) for e in _schedule(self.schedule)))

    @property
    def rounds(self) -> int:
        """Number of rounds T."""
        return len(self.schedule)

    def final_mechanism(self):
        """The equivalent single report: ``KRR(schedule[-1], k)``.

        Returns
        -------
        shuffleamp.mechanisms.KRR
        """
        from .mechanisms import KRR
        return KRR(self.schedule[-1], self.k)

    def local_epsilon(self) -> float:
        """Pure ε-LDP of the whole history, ``schedule[-1]`` (Pan 2024, Theorem 3.5)."""
        return self.schedule[-1]

    def epsilon(self, n, delta, **options):
        """Central ε of the whole shuffled schedule at ``delta``: ``shuffleamp.epsilon`` of the final round.

        Parameters
        ----------
        n : int or array_like of int
            Number of users.
        delta : float or array_like of float
            Target δ in (0, 1).
        **options
            Passed to :func:`shuffleamp.epsilon` (``method``, ``evaluator``, ...).

        Returns
        -------
        BoundResult
            Certified upper (and lower) ε; both apply to the whole history.

        Raises
        ------
        ParameterError
            As :func:`shuffleamp.epsilon`.
        """
        import shuffleamp
        return shuffleamp.epsilon(self.final_mechanism(), n, delta, **options)

    def delta(self, n, epsilon, **options):
        """Central δ of the whole shuffled schedule at ``epsilon``: ``shuffleamp.delta`` of the final round.

        Parameters
        ----------
        n : int or array_like of int
            Number of users.
        epsilon : float or array_like of float
            Central ε in nats.
        **options
            Passed to :func:`shuffleamp.delta`.

        Returns
        -------
        BoundResult

        Raises
        ------
        ParameterError
            As :func:`shuffleamp.delta`.
        """
        import shuffleamp
        return shuffleamp.delta(self.final_mechanism(), n, epsilon, **options)

    def fresh_rounds_epsilon(self, n, delta, **options) -> float:
        """Comparison only: central ε of T *fresh* shuffled k-RR rounds at the schedule's ε values.

        Basic composition: each round gets ``delta / T`` and the rounds' certified upper ε are
        summed, giving a ``(sum, delta)`` guarantee.  This is what a user without gradual release
        would pay; a tighter composition accountant lowers it but never below :meth:`epsilon`.

        Parameters
        ----------
        n : int
            Number of users.
        delta : float
            Total δ in (0, 1).
        **options
            Passed to :func:`shuffleamp.epsilon`.

        Returns
        -------
        float
            Sum of the rounds' certified upper ε, nats.

        Raises
        ------
        ParameterError
            As :func:`shuffleamp.epsilon`.
        ResourceLimitError
            More distinct schedule values than the default time budget allows (parameter ``schedule``;
            :data:`FRESH_ROUND_SECONDS` each), refused up front, or the budget ran out.
        """
        import shuffleamp
        from ._numerics import budget, refuse_if_costly
        from .errors import ResourceLimitError
        from .mechanisms import KRR
        d = _validate.delta(delta, "delta") / self.rounds
        values, counts = np.unique(np.asarray(self.schedule), return_counts=True)    # equal rounds once
        what = f"fresh_rounds_epsilon: {values.size} distinct schedule values (one shuffleamp.epsilon each)"
        with budget() as b:
            refuse_if_costly(what, "schedule", seconds=values.size * FRESH_ROUND_SECONDS,
                             hint="use fewer distinct schedule values")
            total = 0.0
            for e, c in zip(values, counts):
                if b.remaining() < 0:
                    raise ResourceLimitError(f"{what}: exceeded max_seconds={b.max_seconds:g}; use fewer distinct "
                                             "schedule values", parameter="schedule", resource="time")
                total += int(c) * float(shuffleamp.epsilon(KRR(float(e), self.k), n, d, **options).upper)
        return total
