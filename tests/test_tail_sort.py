"""The compiled tail bound's stable merge sort of the integration segments: the bound of any order equals, bit
for bit, the bound of the same segments pre-sorted by ``numpy.argsort(kind="stable")`` (then the compiled sort
has nothing to do), on the orders the profile produces (sorted runs of refined cells after coarser ones) and
on random orders with ties; and it agrees with the Python tail bound (``exact._tail_bound``) up to libm's
last-bit differences."""

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


@pytest.mark.parametrize("kind", ["runs", "ties", "random"])
def test_tail_bound_equals_python(kind):
    rng = np.random.default_rng({"runs": 1, "ties": 2, "random": 3}[kind])
    for _ in range(40):
        a, b, m = _segments(rng, kind)
        T = float(rng.uniform(1.0, 250.0))
        got = kernels.tail_bound(a, b, m, T, X.TAIL_CONST)
        o = np.argsort(a, kind="stable")
        assert got == kernels.tail_bound(a[o], b[o], m[o], T, X.TAIL_CONST)
        assert got == pytest.approx(X._tail_bound(a, b, m, T), rel=1e-13, abs=0.0)


def test_tail_bound_sorted_and_single():
    a = np.array([0.0, 1.0, 2.0]); b = a + 1.0; m = np.array([0.5, 0.25, 0.125])
    assert kernels.tail_bound(a, b, m, 8.0, X.TAIL_CONST) == pytest.approx(X._tail_bound(a, b, m, 8.0), rel=1e-13)
    one = np.array([0.0])
    assert kernels.tail_bound(one, one + 1.0, one + 0.5, 4.0, X.TAIL_CONST) == pytest.approx(
        X._tail_bound(one, one + 1.0, one + 0.5, 4.0), rel=1e-13)
