"""Typed errors raised by shuffleamp.

Every error that concerns a user-supplied value is a :class:`ParameterError`
(a :class:`ValueError`) and names the offending parameter in ``.parameter``.
"""

from __future__ import annotations


class ShuffleampError(Exception):
    """Base class of every error raised on purpose by shuffleamp."""


class ParameterError(ShuffleampError, ValueError):
    """A parameter is missing, NaN, out of range or of the wrong shape.

    Attributes
    ----------
    parameter : str
        Name of the offending parameter (for example ``"eps0"`` or ``"delta"``).
    """

    def __init__(self, parameter: str, message: str):
        self.parameter = parameter
        super().__init__(f"{parameter}: {message}")


class NotLDPError(ParameterError):
    """A randomizer does not satisfy the ε0-LDP it claims (or any pure LDP)."""


class OutOfRegimeError(ShuffleampError, ValueError):
    """A method was asked for a value outside the regime where its formula is valid."""


class ResourceLimitError(ShuffleampError, MemoryError):
    """The requested computation would exceed the time or memory budget; nothing was run."""
