"""Numerical building blocks shared by the evaluators.

:class:`LogMgf` is the one log-MGF of a finite law used by both δ evaluators
(:mod:`shuffleamp.fft_engine` and :mod:`shuffleamp.exact`): a thin wrapper over the compiled
kernel (``shuffleamp._ext.kernels``: ``log_mgf``, ``tilted_moments``, ``tilted_weights``,
``saddle_point``), so K(t), its derivatives and the tilted law are computed in one place.

References
----------
Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling",
IEEE S&P 2026 (arXiv:2504.07414): δ = (1/n) E[(G_1+...+G_n)_+], evaluated by both evaluators
through the exponentially tilted law of G.
"""

from __future__ import annotations

import numpy as np

from ._ext import kernels


class LogMgf:
    r"""Log-MGF :math:`K(t) = \log E[e^{tX}]` of a finite law and its tilted law.

    Parameters
    ----------
    x : array_like of float, shape (K,)
        Atoms (values of G, or integer grid indices of a discretised G).
    w : array_like of float, shape (K,)
        Non-negative masses; normalised here (``w / w.sum()``) once.

    Attributes
    ----------
    x, p : ndarray of float64, shape (K,)
        Contiguous atoms and normalised masses passed to the kernels.

    Notes
    -----
    ``K(t)`` uses the ``log1p``/``expm1`` form when :math:`\max_j |t x_j| < 0.5` (relative accuracy
    in K itself, so that :math:`nK(t)` stays accurate at :math:`n = 10^9`) and a max-shifted
    log-sum-exp otherwise.
    """

    __slots__ = ("x", "p")

    def __init__(self, x, w):
        self.x = np.ascontiguousarray(x, dtype=np.float64)
        w = np.asarray(w, dtype=np.float64)
        self.p = np.ascontiguousarray(w / w.sum())

    def __call__(self, t: float) -> float:
        """K(t) (float)."""
        return kernels.log_mgf(self.x, self.p, float(t))

    def moments(self, t: float) -> tuple[float, float]:
        """(K'(t), K''(t)): mean and variance of the law tilted by :math:`e^{tx}`."""
        return kernels.tilted_moments(self.x, self.p, float(t))

    def tilted(self, t: float) -> np.ndarray:
        """Masses of the tilted law, :math:`p_j e^{t x_j} / M(t)` (float64, shape (K,), sum 1)."""
        return kernels.tilted_weights(self.x, self.p, float(t))

    def saddle(self, n: float) -> tuple[float, float, float]:
        r"""Saddle point :math:`\theta > 0` of :math:`nK(\theta) - 2\log\theta`, i.e. the root of
        :math:`nK'(\theta) = 2/\theta` (unique when the law has a positive atom).

        Parameters
        ----------
        n : float
            Number of summands.

        Returns
        -------
        theta, mean, variance : float
            The root and :math:`K'(\theta)`, :math:`K''(\theta)`.
        """
        return kernels.saddle_point(self.x, self.p, float(n))
