r"""The compiled tail bound of the Bromwich integral (``kernels.tail_bound``): the stable merge sort of the
integration segments gives, bit for bit, the bound of the same segments pre-sorted by
``numpy.argsort(kind="stable")`` (then the compiled sort has nothing to do), on the orders the profile produces
(sorted runs of refined cells after coarser ones) and on random orders with ties; and it lies between the
defining sum :math:`\mathrm{TAIL\_CONST}\,T^{-2}\int_0^{T/2} A(w)\,dw/w`, evaluated in mpmath at 40 digits
(:func:`_tail_reference`, independent of the kernel's floating-point order), less 1e-13 relative for the
kernel's rounding, and that sum times 1 + 2e-9 (the kernel adds 1e-9 of slack)."""

import mpmath as mp
import numpy as np
import pytest

from shuffleamp import exact as X
from shuffleamp._ext import kernels


def _segments(rng, kind):
    if kind == "runs":
        # coarse cells, then several passes of refined sub-cells (each pass sorted), as the widening loop pushes
        parts = []
        lo = 0.0
        for _ in range(rng.integers(1, 6)):
            w = rng.uniform(0.01, 1.0)
            cnt = int(rng.integers(1, 400))
            start = rng.uniform(0.0, 50.0)
            a = start + w * np.arange(cnt)
            parts.append(a)
        a = np.concatenate([np.array([lo]), *parts])
    elif kind == "ties":
        a = rng.integers(0, 30, size=int(rng.integers(2, 500))).astype(float) * 0.5
    else:
        a = rng.uniform(0.0, 100.0, size=int(rng.integers(2, 2000)))
    b = a + rng.uniform(0.0, 2.0, size=a.size)
    m = rng.uniform(0.0, 1.0, size=a.size) * (b - a)
    return np.ascontiguousarray(a), np.ascontiguousarray(b), np.ascontiguousarray(m)


def _tail_reference(a, b, m, T):
    r"""``TAIL_CONST / T^2 * sum_i A_i * int_{a_i}^{min(b_i, T/2)} dw / w`` over the segments with a_i < T/2, sorted
    stably by left end, :math:`A_i = \sum_{j \le i} m_j` (the bound of :math:`\int_0^w |\psi|^n` on segment i),
    and :math:`\int_0^{b} dw = b` on a segment starting at 0 (:math:`A(w) \le w` there); in mpmath, 40 digits."""
    with mp.workdps(40):
        order = sorted(range(len(a)), key=lambda i: float(a[i]))
        A = mp.mpf(0)
        total = mp.mpf(0)
        half = mp.mpf(float(T)) / 2
        for i in order:
            ai, bi = mp.mpf(float(a[i])), mp.mpf(float(b[i]))
            if not ai < half:
                continue
            bi = min(bi, half)
            A += mp.mpf(float(m[i]))
            total += (bi - ai) if ai <= 0 else A * (mp.log(bi) - mp.log(ai))
        return float(2 * mp.mpf(2) / (2 * mp.sin(mp.mpf(1) / 2)) ** 2 / mp.mpf(float(T)) ** 2 * total)


@pytest.mark.parametrize("kind", ["runs", "ties", "random"])
def test_tail_bound_matches_the_defining_sum(kind):
    rng = np.random.default_rng({"runs": 1, "ties": 2, "random": 3}[kind])
    for _ in range(40):
        a, b, m = _segments(rng, kind)
        T = float(rng.uniform(1.0, 250.0))
        got = kernels.tail_bound(a, b, m, T, X.TAIL_CONST)
        o = np.argsort(a, kind="stable")
        assert got == kernels.tail_bound(a[o], b[o], m[o], T, X.TAIL_CONST)
        ref = _tail_reference(a, b, m, T)
        assert ref * (1 - 1e-13) <= got <= ref * (1 + 2e-9), (got, ref)       # the kernel adds 1e-9 of slack


def test_tail_bound_sorted_and_single():
    a = np.array([0.0, 1.0, 2.0]); b = a + 1.0; m = np.array([0.5, 0.25, 0.125])
    assert kernels.tail_bound(a, b, m, 8.0, X.TAIL_CONST) == pytest.approx(_tail_reference(a, b, m, 8.0), rel=2e-9)
    one = np.array([0.0])
    assert kernels.tail_bound(one, one + 1.0, one + 0.5, 4.0, X.TAIL_CONST) == pytest.approx(
        _tail_reference(one, one + 1.0, one + 0.5, 4.0), rel=2e-9)
