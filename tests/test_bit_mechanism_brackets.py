"""BLH, RAPPOR, OUE: the per-round bracket against brute force over every dataset (tests/oracle.py).

The oracle maximises the shuffled divergence over every neighbouring dataset pair (histogram laws in
extended precision, no decomposition).  Upper >= truth >= lower everywhere; and for BLH the dataset
with the other users at the target's second value (the enumeration's worst at small n) makes the lower
bound the exact worst case there.
"""
import pytest

import shuffleamp as sa
from shuffleamp.mechanisms import BLH, OUE, RAPPOR

import oracle as O

CASES = [(BLH(eps0=3.0, d=3), 4), (BLH(eps0=1.5, d=3), 5), (RAPPOR(eps0=2.0, d=3), 4), (OUE(eps0=2.0, d=3), 4)]


@pytest.mark.parametrize("mech,n", CASES)
@pytest.mark.parametrize("eps", [0.2, 0.6])
def test_bracket_contains_worst_dataset(mech, n, eps):
    truth = O.worst_dataset_divergence(mech.matrix(), n, eps)
    r = sa.delta(mech, n, eps)
    assert r.lower <= truth * (1 + 1e-9) + 1e-15
    assert truth <= r.upper * (1 + 1e-12) + 1e-15


@pytest.mark.parametrize("n", [4, 6])
def test_blh_lower_is_worst_case_at_small_n(n):
    """The dataset (0 | 1; others 1) attains the enumerated worst case of BLH (d = 3) at ε = 0.5."""
    mech = BLH(eps0=3.0, d=3)
    truth = O.worst_dataset_divergence(mech.matrix(), n, 0.5)
    assert sa.delta(mech, n, 0.5).lower == pytest.approx(truth, rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("mech", [BLH(eps0=3.0, d=3), BLH(eps0=3.0, d=4), RAPPOR(eps0=2.0, d=3),
                                  OUE(eps0=2.0, d=3)])
@pytest.mark.parametrize("n", [6, 8])
def test_bracket_contains_worst_dataset_larger_n(mech, n):
    for eps in (0.1, 0.5, 1.0):
        truth = O.worst_dataset_divergence(mech.matrix(), n, eps, max_pairs=100_000)
        r = sa.delta(mech, n, eps)
        assert r.lower <= truth * (1 + 1e-9) + 1e-15 <= r.upper * (1 + 1e-9) + 2e-15


@pytest.mark.parametrize("eps", [0.1, 0.5])
def test_parallel_with_blh_lower_below_worst_dataset(eps):
    """A parallel composition mixes the components' lower laws only at one common dataset (each BLH dataset
    carries its own shape), so its lower bound stays below the enumerated worst case."""
    from shuffleamp import compose
    from shuffleamp.mechanisms import KRR
    pm = compose.parallel([(0.4, KRR(1.5, 3)), (0.6, BLH(eps0=1.5, d=3))])
    truth = O.worst_dataset_divergence(pm.matrix(), 4, eps)
    r = sa.delta(pm, 4, eps)
    assert r.lower <= truth * (1 + 1e-9) + 1e-15 <= r.upper * (1 + 1e-9) + 2e-15
