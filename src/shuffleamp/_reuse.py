"""Results shared by the calls of one evaluation, kept for that evaluation only.

A budget plan's report composes every collection over its rounds and then all of them together (the grand
total).  Both evaluate certified privacy profiles of the same round types, often at the same ε (the grand
total's grid step is the coarsest collection's own, and every search for a profile's support edge starts at the
same points), and one accountant call sizes the same privacy-loss distributions more than once before composing
them.  A :func:`scope` keeps such results for the duration of a ``with`` block, keyed by the exact inputs of the
computation (array bytes, the bit pattern of every ε, the identity of a held object), so every value is
computed once and is, bit for bit, the value a call without the scope computes.

Two lifetimes:

* :func:`scope` (an evaluation: a plan's collections and its grand total) keeps small pointwise values
  (:func:`pointwise`: a certified profile at each ε);
* :func:`call_scope` (one accountant call) also keeps values tied to objects of that call (:func:`remember`,
  e.g. the composed size of a privacy-loss distribution), which are released when the call returns, so no
  privacy-loss distribution outlives the call that built it.

An inner ``with`` keeps the enclosing scope's tables (an evaluation scope is shared by the calls inside it; a
call scope is per call).  Nothing is global: outside every scope, every function here just computes.

Thread safety: scopes live in a context variable, so a thread sees a scope only when it runs in a copy of the
context that installed it; every table is read and written under one lock per scope, and values are computed
outside the lock.  A point another thread is computing is waited for, not computed again (:func:`pointwise`;
if that computation fails, the waiting thread computes the point itself); two threads that miss an object-bound
value at once both compute it (:func:`remember`), and both get the same value, a pure function of its key.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from typing import Any, Callable, Hashable

import numpy as np

__all__ = ["call_scope", "pointwise", "remember", "scope"]


class _Tables:
    """The tables of one scope, under one lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.points: dict = {}      # key -> {ε bit pattern: value (a float, or nested lists of the leading shape)}
        self.pending: dict = {}     # key -> {ε bit pattern: threading.Event of the thread computing it}
        self.objects: dict = {}     # key -> (held object, value)


_EVALUATION: contextvars.ContextVar = contextvars.ContextVar("shuffleamp_reuse_evaluation", default=None)
_CALL: contextvars.ContextVar = contextvars.ContextVar("shuffleamp_reuse_call", default=None)


@contextlib.contextmanager
def scope():
    """Share pointwise values among the calls inside the ``with`` block (an enclosing scope is kept)."""
    if _EVALUATION.get() is not None:
        yield
        return
    token = _EVALUATION.set(_Tables())
    try:
        yield
    finally:
        _EVALUATION.reset(token)


@contextlib.contextmanager
def call_scope():
    """One accountant call: its own table of object-bound values (:func:`remember`), and an evaluation
    :func:`scope` if none is installed."""
    token = _CALL.set(_Tables())
    try:
        with scope():
            yield
    finally:
        _CALL.reset(token)


def pointwise(key: Hashable, x, compute: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``compute`` at every entry of ``x``, each entry computed once per evaluation scope.

    Parameters
    ----------
    key : hashable
        The exact inputs of ``compute`` other than ``x`` (equal keys must mean the same function of ``x``).
    x : array_like of float
        Any shape.
    compute : callable
        Takes a 1-D float64 array ``t`` and returns a float64 array of shape ``lead + t.shape`` whose ``[..., i]``
        depends on ``t[i]`` only (not on the other entries, their number or their order).

    Returns
    -------
    ndarray
        Shape ``lead + x.shape``: ``compute`` of the flattened ``x``, reshaped; outside a scope exactly that.
    """
    x = np.asarray(x, dtype=np.float64)
    flat = np.ascontiguousarray(x.ravel())
    tables = _EVALUATION.get()
    if tables is None or flat.size == 0:
        out = np.asarray(compute(flat))
        return out.reshape(out.shape[:-1] + x.shape)
    bits = flat.view(np.uint64).tolist()
    mine, theirs, done = [], set(), threading.Event()
    with tables.lock:
        table = tables.points.setdefault(key, {})
        pending = tables.pending.setdefault(key, {})
        for b in dict.fromkeys(bits):
            if b in table:
                continue
            if b in pending:
                theirs.add(pending[b])        # another thread is computing it: wait below
            else:
                pending[b] = done
                mine.append(b)
    if mine:
        try:
            _fill(table, tables.lock, mine, compute)
        finally:
            with tables.lock:
                for b in mine:
                    pending.pop(b, None)
            done.set()
    for ev in theirs:
        ev.wait()
    with tables.lock:
        missing = [b for b in dict.fromkeys(bits) if b not in table]
    if missing:                               # another thread's computation failed: compute them here
        _fill(table, tables.lock, missing, compute)
    with tables.lock:
        got = [table[b] for b in bits]
    out = np.moveaxis(np.array(got, dtype=np.float64), 0, -1)
    return out.reshape(out.shape[:-1] + x.shape)


def _fill(table: dict, lock, bits: list, compute) -> None:
    """Compute the points of bit patterns ``bits`` in one call and store them in ``table``."""
    vals = np.asarray(compute(np.array(bits, dtype=np.uint64).view(np.float64)), dtype=np.float64)
    rows = np.moveaxis(vals, -1, 0).tolist()       # Python floats (or lists of them): the same doubles, compact
    with lock:
        table.update(zip(bits, rows))


def remember(key: Hashable, held: Any, compute: Callable[[], Any]) -> Any:
    """``compute()`` once per accountant call (:func:`call_scope`) for ``key``, which may name ``held`` by its
    ``id``: ``held`` is kept with the value, so the id is not reused while the entry lives.  Outside a call
    scope, ``compute()``."""
    tables = _CALL.get()
    if tables is None:
        return compute()
    with tables.lock:
        hit = tables.objects.get(key)
    if hit is not None and hit[0] is held:
        return hit[1]
    value = compute()
    with tables.lock:
        tables.objects[key] = (held, value)
    return value
