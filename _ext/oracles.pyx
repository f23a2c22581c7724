# cython: language_level=3
"""Test oracles: exact evaluations that are never imported by the library.

* :func:`gparv_bruteforce`: (1/n) E[(G_1+...+G_n)_+] by multinomial enumeration (small n);
* :func:`exact_four_atom`: O(n) binomial-mixture sums for four-atom GPARVs (moderate n).

They are independent of the discretised and Bromwich evaluators, which the tests compare
against them.  (``gparv_bruteforce`` shares the enumeration kernel of the exact evaluator's
small-n path; tests of that path use the extended-precision brute force of ``tests/oracle.py``.)
"""

from shuffleamp._ext.kernels import multinomial_positive_part

from libc.math cimport ceil, floor, exp, log, log1p, sqrt, fabs, lgamma
from scipy.special.cython_special cimport betainc, betaincc

include "_binomial_sums.pxi"


def gparv_bruteforce(const double[::1] values, const double[::1] probs, int n):
    """Exact (1/n) E[(G_1+...+G_n)_+] by enumerating all multinomial count vectors.

    Cost is C(n+K-1, K-1); meant for small n (<= ~60) and K <= 6 atoms (test oracle).

    Parameters
    ----------
    values, probs : float64[::1], shape (K,)
        Atoms and masses (sum 1).
    n : int
        Number of summands.

    Returns
    -------
    float
    """
    return multinomial_positive_part(values, probs, n)[0] / n


def exact_four_atom(double v1, double p1, double v2, double p2, double v3, double p3, double v4,
                    long n, double width=14.0):
    """Exact E[(sum G_i)_+]/n for a four-atom G (atoms v1..v4, masses p1, p2, p3, 1-p1-p2-p3).

    Conditions on N1 ~ Bin(n, p1) and N2 | N1 ~ Bin(n - N1, p2/(1-p1)); N3 | N1, N2 enters by a
    closed-form binomial tail.  O(n) terms with windows.  Returns (lo, hi) as exact_three_atom.

    Parameters
    ----------
    v1, p1, v2, p2, v3, p3, v4 : float
        Atoms and masses (the fourth mass is 1 - p1 - p2 - p3).
    n : int
        Number of summands.
    width : float
        Window half-width in binomial standard deviations.

    Returns
    -------
    (lo, hi) : floats
    """
    cdef double tot = 0.0, mass_in, part, pk, q1 = 1.0 - p1
    cdef double p4 = 1.0 - p1 - p2 - p3
    cdef double pi2 = p2 / q1 if q1 > 0 else 0.0
    cdef double pi3 = p3 / (p3 + p4) if (p3 + p4) > 0 else 0.0
    cdef double dropped = 0.0, vmax
    cdef long lo1, hi1, lo2, hi2, k, m
    with nogil:
        _window(n, p1, width, &lo1, &hi1)
        dropped = _outside(n, p1, lo1, hi1)
        k = lo1
        while k <= hi1:
            pk = _binom_pmf(k, n, p1)
            if pk > 0.0:
                m = n - k
                _window(m, pi2, width, &lo2, &hi2)
                # S = k v1 + N2 v2 + (m - N2) v4 + N3 (v3 - v4), N3 ~ Bin(m - N2, pi3)
                part = _sum_window(m, pi2, lo2, hi2, k * v1 + m * v4, v2 - v4, m, -1, v3 - v4, pi3, &mass_in)
                tot += pk * part
                dropped += pk * mass_in
            k += 1
    vmax = max(max(v1, v2), max(max(v3, v4), 0.0))
    return tot / n, (tot + dropped * n * vmax) / n
