# cython: language_level=3
"""Exact binomial-mixture sums for three-atom GPARVs (production: clone and variation-ratio baselines).

For a three-atom G the count of atoms 1 or 2 is binomial and, given it, the count of atom 1 is
binomial again; the inner expectation of the positive part has a closed form in binomial tails
(regularised incomplete beta), so E[(G_1+...+G_n)_+] is a sum of O(sqrt n) terms over a window of
the outer binomial, with the window's outside mass charged.

References
----------
Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling",
IEEE S&P 2026 (arXiv:2504.07414): the GPARV functional evaluated here.
Feldman, McMillan, Talwar, "Hiding Among the Clones", FOCS 2021: the clone reduction whose
three-atom variable this evaluates.
"""

from libc.math cimport ceil, floor, exp, log, log1p, sqrt, fabs, lgamma
from scipy.special.cython_special cimport betainc, betaincc

include "_binomial_sums.pxi"


#: Half-width of :func:`exact_three_atom`'s window in standard deviations of the outer binomial (default).
WINDOW_WIDTH = 14.0


def window_terms(long n, double pc, double width=WINDOW_WIDTH):
    """Number of terms of :func:`exact_three_atom`'s window sum: the counts of the outer binomial Bin(n, pc)
    within ``width`` standard deviations (plus 10) of its mean, clipped to [0, n].

    Parameters
    ----------
    n : int
        Number of summands.
    pc : float
        Mass of atoms 1 or 2 (``p1 + p2``), in [0, 1].
    width : float
        Window half-width in binomial standard deviations (as :func:`exact_three_atom`'s).

    Returns
    -------
    int
    """
    cdef long lo, hi
    _window(n, pc, width, &lo, &hi)
    return hi - lo + 1


def exact_three_atom(double v1, double p1, double v2, double p2, double v3, long n, double width=WINDOW_WIDTH):
    """Exact E[(sum_{i<=n} G_i)_+]/n for a three-atom G (v1 w.p. p1, v2 w.p. p2, v3 otherwise).

    C = #(atoms 1 or 2) ~ Bin(n, p1+p2); given C, N1 ~ Bin(C, p1/(p1+p2)) enters through a
    closed-form binomial tail.  O(sqrt n) terms.  Returns (lo, hi): the window sum, and it
    plus the dropped window mass times max(S_+) (charged pessimistically).

    Parameters
    ----------
    v1, p1, v2, p2, v3 : float
        Atoms and masses (the third mass is 1 - p1 - p2).
    n : int
        Number of summands.
    width : float
        Window half-width in binomial standard deviations.

    Returns
    -------
    (lo, hi) : floats
    """
    cdef double pc = p1 + p2, tot, dropped, vmax
    cdef long lo, hi
    if pc <= 0.0:
        tot = v3 * n if v3 > 0 else 0.0
        return tot / n, tot / n
    with nogil:
        _window(n, pc, width, &lo, &hi)
        # S = n v3 + C (v2 - v3) + N1 (v1 - v2)
        tot = _sum_window(n, pc, lo, hi, n * v3, v2 - v3, 0, 1, v1 - v2, p1 / pc, &dropped)
    vmax = max(v1, v2, v3, 0.0)
    return tot / n, (tot + dropped * n * vmax) / n
