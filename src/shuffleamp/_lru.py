"""A bounded least-recently-used cache that is safe under concurrent calls.

Production services call :func:`shuffleamp.epsilon` from many threads (and Dask's threaded scheduler does
too); the compiled kernels release the GIL, so several calls really run at once.  Every lookup, insertion
and eviction here happens under one lock, so two threads never evict the same key or iterate while the
other resizes.  Values are computed *outside* the lock by the caller (a slow construction does not block
other threads; two threads that miss at once both compute, and the second insertion wins, which is harmless
because cached values are pure functions of their key).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

__all__ = ["LRUCache"]

_MISSING = object()


class LRUCache:
    """Bounded LRU mapping guarded by a lock.

    Parameters
    ----------
    maxsize : int
        Largest number of entries kept; the least recently used are evicted beyond it.
    """

    def __init__(self, maxsize: int):
        self.maxsize = int(maxsize)
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, default=None):
        """The value of ``key`` (marked most recently used), or ``default``.

        Raises
        ------
        TypeError
            If ``key`` is not hashable.
        """
        with self._lock:
            value = self._data.get(key, _MISSING)
            if value is _MISSING:
                return default
            self._data.move_to_end(key)
            return value

    def put(self, key, value, maxsize: int | None = None) -> None:
        """Store ``value`` under ``key`` as the most recently used and evict beyond ``maxsize``
        (default: :attr:`maxsize`)."""
        limit = self.maxsize if maxsize is None else int(maxsize)
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > max(limit, 0):
                self._data.popitem(last=False)

    def clear(self) -> None:
        """Remove every entry."""
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self._data
