"""shuffleamp: sound, tight bounds for privacy amplification by shuffling.

The main entry points are :func:`epsilon` and :func:`delta`, which take a randomizer from
:mod:`shuffleamp.mechanisms` and return certified upper and lower bounds on the central
(ε, δ) after shuffling n reports.  Importing the package is cheap: the numerical modules are
loaded on first use of a name below (module ``__getattr__``).

References
----------
P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling",
IEEE S&P 2026 (short version: arXiv:2504.07414), Theorems 13 (upper bound) and 14 (lower bound).
"""

import importlib

__version__ = "0.1.0"

#: Public name -> module that defines it (loaded lazily).
_EXPORTS = {
    "epsilon": "bounds", "delta": "bounds", "BoundResult": "results", "PlanningResult": "results",
    "ShuffleampError": "errors", "ParameterError": "errors", "NotLDPError": "errors",
    "OutOfRegimeError": "errors", "ResourceLimitError": "errors",
    "joint": "compose", "parallel": "compose", "subsample": "compose",
    "to_pld": "accounting", "compose_rounds": "accounting", "max_rounds": "accounting",
    "privacy_profile": "accounting", "AccountingResult": "results", "GradualRelease": "gradual",
    "sweep": "sweep", "plot": "plot", "plot_plan": "plot", "plan_max": "plans",
    "population": "personalized", "Population": "personalized", "PopulationResult": "results",
    "rdp": "renyi", "Gaussian": "gaussian", "ApproximateLDP": "gaussian",
}
#: Submodules reachable as attributes (``shuffleamp.baselines``) without an explicit import.
_SUBMODULES = ("mechanisms", "gparv", "decomposition", "fft_engine", "exact", "exact_count", "compose", "bounds",
               "baselines", "planning", "accounting", "gradual", "config", "cli", "results", "errors", "personalized",
               "plans", "interop", "renyi", "gaussian")

__all__ = ["__version__", "epsilon", "delta", "BoundResult", "ShuffleampError", "ParameterError",
           "NotLDPError", "OutOfRegimeError", "ResourceLimitError", "joint", "parallel", "subsample",
           "to_pld", "compose_rounds", "max_rounds", "privacy_profile", "AccountingResult", "GradualRelease",
           "sweep", "plot", "plot_plan", "plan_max", "population", "Population", "PopulationResult", "rdp",
           "Gaussian", "ApproximateLDP"]


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'shuffleamp' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS) | set(_SUBMODULES))
