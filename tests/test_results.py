"""The public result types: one home (``shuffleamp.results``), one serialiser (``to_dict``), one name
for the certified error (``error``), short one-line reprs; the former names still work, with a
:class:`DeprecationWarning`."""

from __future__ import annotations

import json
import warnings

import pytest

import shuffleamp
from shuffleamp import results
from shuffleamp.mechanisms import KRR

RESULT_TYPES = ("BoundResult", "PlanningResult", "AccountingResult", "ExactCountResult", "GroupResult",
                "PopulationResult")


@pytest.fixture(scope="module")
def examples():
    from shuffleamp import planning
    from shuffleamp.exact_count import delta_binary_rr

    pop = shuffleamp.population([(KRR(1.0, 10), 500), (KRR(2.0, 10), 500)])
    popr = shuffleamp.epsilon(pop, delta=1e-6)
    return {
        "BoundResult": shuffleamp.epsilon(KRR(1.0, 10), 1000, 1e-6),
        "PlanningResult": planning.min_n(KRR(1.0, 10), 0.5, 1e-6),
        "AccountingResult": shuffleamp.compose_rounds([(KRR(1.0, 2), 10_000, 3)], delta=1e-6),
        "ExactCountResult": delta_binary_rr(1.0, 1000, 0.3),
        "GroupResult": popr.groups[0],
        "PopulationResult": popr,
    }


def test_every_result_type_lives_in_results_and_keeps_its_former_home():
    from shuffleamp import accounting, exact_count, personalized, planning

    for name in RESULT_TYPES:
        cls = getattr(results, name)
        assert cls.__module__ == "shuffleamp.results" and name in results.__all__
    assert accounting.AccountingResult is results.AccountingResult
    assert exact_count.ExactCountResult is results.ExactCountResult
    assert personalized.GroupResult is results.GroupResult
    assert personalized.PopulationResult is results.PopulationResult
    assert planning.PlanningResult is results.PlanningResult
    assert shuffleamp.AccountingResult is results.AccountingResult
    assert shuffleamp.PopulationResult is results.PopulationResult


def test_to_dict_error_and_short_reprs(examples):
    for name, r in examples.items():
        assert type(r).__name__ == name
        d = r.to_dict("epsilon") if name == "GroupResult" else r.to_dict()
        json.dumps(d)                                    # JSON-serialisable as it is
        text = repr(r)
        assert "\n" not in text and text.startswith(name + "(") and len(text) < 320, text
        assert "np." not in text
        if name != "PlanningResult":                     # the planning answer is a feasibility, not a bound
            assert "error" in d and d["error"] == r.error and r.error is not None and r.error >= 0


def test_bound_result_error_is_the_certified_error_of_the_upper_evaluation(examples):
    r = examples["BoundResult"]
    d = r.to_dict()
    assert d["error"] == d["delta_error"] == r.error
    assert d["bounds"]["upper"]["error"] == d["bounds"]["upper"]["delta_error"] == r.error
    assert r.error == r.settings["grid"]["upper"].get("delta_error", r.settings["grid"]["upper"].get("charged"))
    p = examples["PopulationResult"].to_dict()
    assert p["error"] == p["delta_error"] and all(g["error"] == g["delta_error"] for g in p["groups"])


def test_former_names_are_deprecated_aliases(examples):
    from shuffleamp.exact import delta_exact
    from shuffleamp.results import Evaluation, ExactDetail, FftDetail

    r = examples["BoundResult"]
    with pytest.warns(DeprecationWarning, match="BoundResult.error"):
        assert r.delta_error == r.error
    ev = Evaluation(1e-9, "upper", 1e-15, "exact", ExactDetail(0.5, 12))
    with pytest.warns(DeprecationWarning, match="Evaluation.to_dict"):
        assert ev.as_dict() == ev.to_dict()
    with pytest.warns(DeprecationWarning, match="ExactDetail.to_dict"):
        assert ev.detail.as_dict() == ev.detail.to_dict() == {"N": 12, "eta": 0.5}
    fd = FftDetail(0.1, 64, 0.2, (0, 63), False)
    with pytest.warns(DeprecationWarning, match="FftDetail.to_dict"):
        assert fd.as_dict() == fd.to_dict()
    # the library itself no longer uses the former names
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        shuffleamp.delta(KRR(1.0, 10), 300, 0.3).to_dict()
        delta_exact(KRR(1.0, 4).upper_decompositions()[0].gparv(0.3), 200).to_dict()
