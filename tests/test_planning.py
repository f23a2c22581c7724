"""Planning queries: the answers are certified feasible and the bracket is tight."""

import json

import pytest

import shuffleamp as sa
from shuffleamp import planning
from shuffleamp.cli import main
from shuffleamp.errors import OutOfRegimeError, ParameterError
from shuffleamp.mechanisms import KRR, MatrixMechanism


def test_min_n_feasible_and_minimal():
    m = KRR(4.0, 10)
    r = planning.min_n(m, 0.5, 1e-6)
    assert sa.delta(m, r.value, 0.5).upper <= 1e-6
    assert r.infeasible_bound == r.value - 1
    assert sa.delta(m, r.infeasible_bound, 0.5).upper > 1e-6
    # consistent with the epsilon search: at n the upper epsilon meets the target
    assert sa.epsilon(m, r.value, 1e-6).upper <= 0.5


def test_max_eps0_feasible_and_tight():
    r = planning.max_eps0(KRR(1.0, 10), 10_000, 0.3, 1e-6)
    assert sa.delta(KRR(r.value, 10), 10_000, 0.3).upper <= 1e-6
    assert sa.delta(KRR(r.infeasible_bound, 10), 10_000, 0.3).upper > 1e-6
    assert r.infeasible_bound / r.value - 1 <= 1e-4
    assert sa.epsilon(KRR(r.value, 10), 10_000, 1e-6).upper <= 0.3


def test_planning_errors():
    with pytest.raises(OutOfRegimeError):
        planning.min_n(KRR(4.0, 10), 0.01, 1e-12, n_max=1000)
    with pytest.raises(ParameterError) as e:
        planning.max_eps0(MatrixMechanism([[0.7, 0.3], [0.3, 0.7]]), 100, 0.5, 1e-6)
    assert e.value.parameter == "mechanism"
    with pytest.raises(ParameterError) as e:
        planning.min_n(KRR(1.0, 10), -1.0, 1e-6)
    assert e.value.parameter == "target_epsilon"


def test_planning_cli(capsys):
    assert main(["n", "--mechanism", "krr", "--k", "10", "--eps0", "4", "--target-epsilon", "0.5",
                 "--delta", "1e-6", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    out = doc["result"]
    assert out["n"] >= 1 and out["delta_upper_at_answer"] <= 1e-6 and doc["version"] == sa.__version__
    assert main(["eps0", "--mechanism", "krr", "--k", "10", "--n", "10000", "--target-epsilon", "0.3",
                 "--delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["result"]
    assert out["eps0"] > 0.3 and out["mechanism"]["k"] == 10
