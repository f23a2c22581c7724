"""Real FFTs through pyFFTW with reused plans, falling back to :mod:`scipy.fft`.

The environment variable ``SHUFFLEAMP_FFT`` forces the backend: ``fftw`` (error if
pyFFTW cannot be imported) or ``scipy``.  Default: pyFFTW when importable.
"""

from __future__ import annotations

import os
from collections import OrderedDict

import numpy as np
import scipy.fft

from .errors import ParameterError

_THREADS = max(1, min(os.cpu_count() or 1, 8))
#: transforms shorter than this run on one thread (thread start-up costs more than it saves)
_PARALLEL_MIN = 2**18
_PLAN_CACHE_SIZE = 4


def _load_pyfftw():
    try:
        import pyfftw  # noqa: F401
        import pyfftw.builders  # noqa: F401
    except Exception:  # pragma: no cover - depends on the machine
        return None
    return pyfftw


def backend_name() -> str:
    """Name of the FFT backend in use: ``"fftw"`` or ``"scipy"``."""
    choice = os.environ.get("SHUFFLEAMP_FFT", "").strip().lower()
    if choice not in ("", "fftw", "scipy"):
        raise ParameterError("SHUFFLEAMP_FFT", f"must be 'fftw' or 'scipy', got {choice!r}")
    if choice == "scipy":
        return "scipy"
    if _load_pyfftw() is not None:
        return "fftw"
    if choice == "fftw":
        raise ParameterError("SHUFFLEAMP_FFT", "is 'fftw' but pyfftw cannot be imported")
    return "scipy"


def _threads(N: int) -> int:
    return _THREADS if N >= _PARALLEL_MIN else 1


class _PlanCache:
    def __init__(self):
        self._plans: OrderedDict = OrderedDict()

    def get(self, kind: str, N: int):
        key = (kind, N)
        plan = self._plans.get(key)
        if plan is not None:
            self._plans.move_to_end(key)
            return plan
        import pyfftw
        import pyfftw.builders

        if kind == "irfft":
            inp = pyfftw.empty_aligned(N // 2 + 1, dtype="complex128")
            plan = pyfftw.builders.irfft(inp, n=N, threads=_threads(N), planner_effort="FFTW_ESTIMATE",
                                         avoid_copy=False, overwrite_input=True)
        else:
            inp = pyfftw.empty_aligned(N, dtype="float64")
            plan = pyfftw.builders.rfft(inp, n=N, threads=_threads(N), planner_effort="FFTW_ESTIMATE",
                                        avoid_copy=False)
        self._plans[key] = plan
        while len(self._plans) > _PLAN_CACHE_SIZE:
            self._plans.popitem(last=False)
        return plan


_CACHE = _PlanCache()


def irfft(X: np.ndarray, N: int) -> np.ndarray:
    """Inverse real FFT of length ``N`` (numpy normalisation: 1/N on the inverse)."""
    if backend_name() == "fftw":
        plan = _CACHE.get("irfft", N)
        plan.input_array[:] = X
        return plan().copy()
    return scipy.fft.irfft(X, n=N, workers=_threads(N))


def rfft(x: np.ndarray, N: int) -> np.ndarray:
    """Forward real FFT of length ``N`` (``x`` zero-padded or folded by the caller)."""
    if backend_name() == "fftw":
        plan = _CACHE.get("rfft", N)
        plan.input_array[:] = x
        return plan().copy()
    return scipy.fft.rfft(x, n=N, workers=_threads(N))


def next_fast_len(N: int) -> int:
    """A length >= N that both backends transform fast (5-smooth)."""
    return int(scipy.fft.next_fast_len(int(N), real=True))
