"""Hypothesis profiles and a time-boxed sample of the slow suite in CI.

CI runs ``pytest -m "not slow"``, which would never run the exhaustive and large-n checks.  Here the first
case of each slow test function named in ``SLOW_SAMPLE`` (the ones whose first case takes seconds, not
minutes: about 50 s in all on the loaded 2-core machine) is kept in that run, and the sample stops once it has spent
``SHUFFLEAMP_SLOW_SAMPLE_SECONDS`` (default 60) in a test process: later sampled cases are skipped with the
reason.  ``SHUFFLEAMP_SLOW_SAMPLE_SECONDS=0`` turns the sample off; ``-m slow`` runs the whole slow suite.
"""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import settings

from hypothesis_budget import CI_MAX_EXAMPLES

# Hypothesis profiles (see tests/hypothesis_budget.py): "ci" runs each property's own count, "thorough" ten
# times as many; --hypothesis-profile=NAME or SHUFFLEAMP_HYPOTHESIS_PROFILE=NAME selects one.
settings.register_profile("ci", max_examples=CI_MAX_EXAMPLES)
settings.register_profile("thorough", max_examples=10 * CI_MAX_EXAMPLES)
settings.load_profile(os.environ.get("SHUFFLEAMP_HYPOTHESIS_PROFILE", "ci"))

#: Slow test functions whose first case runs in the CI sample.
SLOW_SAMPLE = {"test_delta_matches_mpmath_every_dataset_slow", "test_worst_over_m_float_reference_slow",
               "test_random_laws_vs_bruteforce_n60", "test_theorem13_dominates_worst_dataset_n5",
               "test_api_delta_sound_full_grid", "test_laplace_exact_vs_fft_engine", "test_bruteforce_sandwich_n5",
               "test_reference_value"}

_BUDGET = float(os.environ.get("SHUFFLEAMP_SLOW_SAMPLE_SECONDS", "60"))
_spent = [0.0]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    if _BUDGET <= 0 or (config.option.markexpr or "").strip() != "not slow":
        return
    seen = set()
    for item in items:
        own = [m for m in getattr(item, "own_markers", []) if m.name == "slow"]
        name = getattr(item, "originalname", item.name)
        if not own or name not in SLOW_SAMPLE:
            continue
        key = (item.module.__name__ if getattr(item, "module", None) else "", name)
        if key in seen:
            continue
        seen.add(key)
        item.own_markers = [m for m in item.own_markers if m.name != "slow"]
        item.add_marker(pytest.mark.slow_sample)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow_sample: a slow test's first case, run in CI within a time box")


def pytest_runtest_setup(item):
    if item.get_closest_marker("slow_sample") is not None and _spent[0] >= _BUDGET:
        pytest.skip(f"slow-suite sample: the {_BUDGET:.0f} s time box of this process is spent")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    t0 = time.perf_counter()
    yield
    if item.get_closest_marker("slow_sample") is not None:
        _spent[0] += time.perf_counter() - t0
