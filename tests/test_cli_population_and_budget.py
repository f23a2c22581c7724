"""Command line: personalized populations (`--mechanism population --group COUNT:NAME:key=value`) and the budget flags."""
import json

import pytest

import shuffleamp as sa
from shuffleamp.cli import main
from shuffleamp.mechanisms import KRR

GROUPS = ["--group", "60000:krr:k=10:eps0=0.5", "--group", "40000:krr:k=10:eps0=2"]


def test_population_json_has_groups_and_worst_group_at_top_level(capsys):
    assert main(["epsilon", "--mechanism", "population", *GROUPS, "--delta", "1e-8", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    res = doc["result"]
    assert doc["schema_version"] >= 1 and doc["error"] is None
    assert [g["n"] for g in res["groups"]] == [60000, 40000]
    # the same numbers as the Python API on the same population
    api = sa.epsilon(sa.population([(KRR(eps0=0.5, k=10), 60000), (KRR(eps0=2.0, k=10), 40000)]), delta=1e-8)
    assert [g["epsilon_upper"] for g in res["groups"]] == [g.upper for g in api.groups]
    worst = max(res["groups"], key=lambda g: g["epsilon_upper"])
    assert res["epsilon_upper"] == worst["epsilon_upper"]
    assert res["epsilon_lower"] <= res["epsilon_upper"]
    assert all(0 < g["epsilon_lower"] <= g["epsilon_upper"] for g in res["groups"])


def test_population_delta_text(capsys):
    assert main(["delta", "--mechanism", "population", *GROUPS, "--epsilon", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "group 0" in out and "group 1" in out and "worst group" in out


@pytest.mark.parametrize("argv, parameter", [
    (["epsilon", "--mechanism", "population", "--delta", "1e-8", "--json"], "--group"),
    (["epsilon", "--mechanism", "population", *GROUPS, "--n", "5", "--delta", "1e-8", "--json"], "n"),
    (["epsilon", "--mechanism", "population", "--group", "0:krr:k=10:eps0=1", "--delta", "1e-8", "--json"], None),
    (["epsilon", "--mechanism", "krr", "--k", "10", "--eps0", "1", "--delta", "1e-8", "--json"], "n"),
    (["epsilon", "--mechanism", "population", *GROUPS, "--eps0", "1", "--delta", "1e-8", "--json"], "eps0"),
])
def test_population_bad_input_is_a_json_error(capsys, argv, parameter):
    assert main(argv) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] is None and doc["error"]["message"]
    if parameter is not None:
        assert doc["error"]["parameter"] == parameter


def test_budget_flags_reach_the_cost_model(capsys):
    """`--max-seconds` is the API's `max_seconds`: a 12-way joint of 10-RR with different eps0 is refused up
    front with a ResourceLimitError naming max_seconds (exit 1, JSON error), and a tiny budget is refused too."""
    comps = ",".join(f"krr:k=10:eps0={0.1 + 0.037 * i:.3f}" for i in range(12))
    assert main(["epsilon", "--mechanism", "joint", "--component", comps, "--n", "1000", "--delta", "1e-8",
                 "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["error"]["type"] == "ResourceLimitError"
    assert main(["epsilon", "--mechanism", "krr", "--k", "10", "--eps0", "1", "--n", "1000", "--delta", "1e-8",
                 "--max-seconds", "-1", "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["error"]["parameter"] == "max_seconds"
