"""shuffleamp: sound, tight bounds for privacy amplification by shuffling.

The main entry points are :func:`epsilon` and :func:`delta`, which take a randomizer from
:mod:`shuffleamp.mechanisms` and return certified upper and lower bounds on the central
(ε, δ) after shuffling n reports (Su–Cheng–Wang optimal blanket / general-clone bound).
"""

__version__ = "0.1.0"

from .bounds import BoundResult, delta, epsilon  # noqa: E402
from .compose import joint, parallel, subsample  # noqa: E402
from .errors import (NotLDPError, OutOfRegimeError, ParameterError,  # noqa: E402
                     ResourceLimitError, ShuffleampError)

__all__ = ["__version__", "epsilon", "delta", "BoundResult", "ShuffleampError", "ParameterError",
           "NotLDPError", "OutOfRegimeError", "ResourceLimitError", "joint", "parallel", "subsample"]


def __getattr__(name):  # lazy submodules used by the CLI
    if name in ("mechanisms", "gparv", "engine", "oracles", "cli", "baselines"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(name)
