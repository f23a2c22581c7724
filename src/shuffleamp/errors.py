"""Typed errors raised by shuffleamp.

Every error that concerns a user-supplied value is a :class:`ParameterError` (a
:class:`ValueError`) and names the offending parameter in ``.parameter``. This module is the
bottom layer of the package: it imports nothing from shuffleamp.
"""

from __future__ import annotations


class ShuffleampError(Exception):
    """Base class of every error raised on purpose by shuffleamp."""


class ParameterError(ShuffleampError, ValueError):
    """A parameter is missing, NaN, out of range or of the wrong shape.

    Parameters
    ----------
    parameter : str
        Name of the offending parameter, as the user spelled it (``"eps0"``, ``"delta"``, ...).
    message : str
        What is wrong with it, without the parameter name.
    text : str, optional
        The full message, when a subclass puts more context around ``message`` (a plan row,
        a component index). Defaults to ``"<parameter>: <message>"``.

    Attributes
    ----------
    parameter : str
        Name of the offending parameter.
    reason : str
        ``message``: the text without the parameter / row / component context.
    """

    def __init__(self, parameter: str, message: str, *, text: str | None = None):
        self.parameter = parameter
        self.reason = message
        super().__init__(text if text is not None else f"{parameter}: {message}")

    @property
    def detail(self) -> str:
        """The message without its leading ``"<parameter>: "`` (a subclass's own context is kept)."""
        text = str(self)
        prefix = f"{self.parameter}: "
        return text[len(prefix):] if text.startswith(prefix) else text


class NotLDPError(ParameterError):
    """A randomizer does not satisfy the ε0-LDP it claims (or any pure LDP)."""


class ComponentError(ParameterError):
    """A component of a composed mechanism is invalid.

    The message names the (1-based) component and the field, e.g.
    ``component 2: field 'k': must be an integer >= 2``.

    Parameters
    ----------
    index : int
        1-based index of the offending component.
    field : str
        The offending field of that component (``"mechanism"``, ``"k"``, ``"weight"``, ...).
    reason : str
        The message without the component/field context.

    Attributes
    ----------
    parameter : str
        Always ``"components"`` (the argument of the builder / the plan field).
    index, field, reason
        As given.
    """

    def __init__(self, index: int, field: str, reason: str):
        self.index = index
        self.field = field
        super().__init__("components", reason, text=f"component {index}: field {field!r}: {reason}")

    @classmethod
    def wrap(cls, index: int, exc: ParameterError) -> "ComponentError":
        """The error ``exc`` of component ``index``, with the component named.

        A nested composed component's own :class:`ComponentError` is kept whole in the reason.

        Parameters
        ----------
        index : int
            Index of the offending component in ``components``.
        exc : ParameterError
            The error raised while building that component.

        Returns
        -------
        ComponentError
            The error to raise (``parameter == "components"``); the caller raises it.
        """
        if isinstance(exc, ComponentError):
            return cls(index, "components", str(exc))
        return cls(index, exc.parameter, exc.detail)


class PlanError(ParameterError):
    """A plan file is unreadable or one of its rows is malformed.

    The message names the row and the field, e.g.
    ``plan row 3 ('emoji'): field 'eps0': must be > 0.0, got -1.0``.

    Parameters
    ----------
    reason : str
        The message without the row/field context.
    row : int, optional
        1-based index of the offending row; None for file-level problems.
    name : str, optional
        The row's ``name`` if it has a usable one.
    field : str, optional
        The offending field; None for file-level or whole-row problems.
    source : str, optional
        The plan's file name, for file-level messages.

    Attributes
    ----------
    parameter : str
        The offending field (``"plan"`` for file-level problems).
    row, name, field, reason, source
        As given.
    """

    def __init__(self, reason: str, *, row: int | None = None, name: str | None = None,
                 field: str | None = None, source: str | None = None):
        self.row = row
        self.name = name
        self.field = field
        self.source = source
        parts = []
        if row is not None:
            label = repr(name) if name is not None else "unnamed"
            parts.append(f"plan row {row} ({label})")
        else:
            parts.append(f"plan {source!r}" if source else "plan")
        if field is not None:
            parts.append(f"field {field!r}")
        parts.append(reason)
        super().__init__(field if field is not None else "plan", reason, text=": ".join(parts))


class OutOfRegimeError(ShuffleampError, ValueError):
    """A method was asked for a value outside the regime where its formula is valid."""


class UnsupportedGparvError(ShuffleampError, NotImplementedError):
    """An evaluator was asked for a GPARV it cannot evaluate.

    Raised by :func:`shuffleamp.exact.delta_exact` when its ``unsupported_reason`` is not None (a
    continuous part without a closed-form moment generating function). Callers check
    ``unsupported_reason`` first and route such laws to the discretised engine.
    """


class ResourceLimitError(ShuffleampError, RuntimeError):
    """The requested computation would exceed the time or memory budget; it was refused.

    Raised *before* the work is done (or as soon as an estimate shows it cannot finish within
    budget), never after running out of memory.

    Parameters
    ----------
    message : str
        What would be too large, and which parameter to change.
    parameter : str, optional
        The user parameter whose value drives the cost (``"n"``, ``"matrix"``, ...), if one does.
    resource : {"time", "memory", None}, optional
        Which budget would be exceeded.

    Attributes
    ----------
    parameter, resource
        As given.
    """

    def __init__(self, message: str, *, parameter: str | None = None, resource: str | None = None):
        self.parameter = parameter
        self.resource = resource
        super().__init__(message)
