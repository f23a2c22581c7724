"""GPARV families of a mechanism for the optimal method, and their caches.

The optimal bound is a maximum over the mechanism's neighbouring input pairs in both directions (Su, Cheng,
Wang, IEEE S&P 2026, arXiv:2504.07414, Theorem 13) and its lower bound a maximum over concrete datasets in both
orderings (Theorem 14).  :func:`_families` builds those families (decompositions and their swaps,
de-duplicated by law; packed arrays for mechanisms with many pairs), :func:`_cached_families` caches them per
immutable mechanism, and :func:`_packed` caches the kernels' packed layout of a family list.  Every cache is
a bounded LRU, safe under concurrent calls.
"""

from __future__ import annotations

from ._lru import LRUCache
from .decomposition import Decomposition, PackedFamilies, dedupe, law_key, pack

#: Above this many families a mechanism's family list is kept packed (entries built on access) and the
#: optimal method's ε search runs on a subset first (the lazy maximum of :mod:`shuffleamp.bounds`).
LAZY_FAMILIES = 12


def _families(mechanism, method: str, which: str) -> list:
    """GPARV families (objects with ``.gparv(eps)``) whose maximum gives the optimal bound.

    ``which="upper"``: the mechanism's upper decompositions and their swaps, de-duplicated by law;
    ``which="lower"``: its Theorem-14 lower-bound decompositions and their swaps (the same datasets
    in the reverse ordering), de-duplicated by law.
    """
    if which == "upper":
        packed = getattr(mechanism, "_upper_packed", None)      # many families: objects built on access
        return _with_swaps(packed() if packed is not None else mechanism.upper_decompositions())
    # both orderings of every lower-bound dataset: H(M(X0)||M(X1)) and H(M(X1)||M(X0)) are both
    # divergences of a concrete neighbouring pair (the swap exchanges a and b)
    packed = getattr(mechanism, "_lower_packed", None)
    return _with_swaps(packed() if packed is not None else mechanism.lower_decompositions())


def _with_swaps(decs) -> list:
    """``dedupe([d0, d0.swapped(), d1, d1.swapped(), ...])`` (the same list), without building the swaps
    that it would drop: a decomposition whose swapped law key is known (``_swap_key``, set by the batch
    constructors and by :meth:`Decomposition.law_key`) is swapped only when that key is new.  A
    :class:`~shuffleamp.decomposition.PackedFamilies` of base decompositions gives the same entries as a
    :class:`~shuffleamp.decomposition.PackedFamilies` (:func:`_with_swaps_packed`: objects built on access)."""
    if isinstance(decs, PackedFamilies):
        return _with_swaps_packed(decs)
    out, seen = [], set()
    for d in decs:
        if type(d) is Decomposition:
            key = law_key(d)                       # ("dec", d.law_key()): caches _swap_key when cheap
            if key not in seen:
                seen.add(key)
                out.append(d)
            sk = d.__dict__.get("_swap_key")
            if sk is not None:
                skey = ("dec", sk)
                if skey not in seen:              # law_key(d.swapped()) == skey: the swap is built with it
                    seen.add(skey)
                    out.append(d.swapped())
                continue
            todo = (d.swapped(),)
        else:
            s = getattr(d, "swapped", lambda: d)()
            todo = (d, s) if s is not d else (d,)
        for f in todo:
            k = law_key(f)
            if k not in seen:
                seen.add(k)
                out.append(f)
    return out


def _with_swaps_packed(decs: PackedFamilies) -> PackedFamilies:
    """:func:`_with_swaps` of a :class:`~shuffleamp.decomposition.PackedFamilies` of base decompositions (each
    with its law key and swap key): the same entries in the same order, from the keys alone."""
    pos, swapped, seen = [], [], set()
    keys, skeys = decs.keys, decs.swap_keys
    for e, p in enumerate(decs.pos):
        # law_key(d) = ("dec", key), law_key(d.swapped()) = ("dec", skey): every entry is a Decomposition, so
        # the raw keys decide the same
        key, skey = keys[p], skeys[p]
        sw = decs.swapped[e]
        if sw:
            key, skey = skey, key
        if key not in seen:
            seen.add(key)
            pos.append(p)
            swapped.append(sw)
        if skey not in seen:
            seen.add(skey)
            pos.append(p)
            swapped.append(not sw)
    return decs.with_entries(pos, swapped)


#: Families of recently used mechanisms: (mechanism, which) -> tuple of families.  Only instances of frozen
#: dataclasses are cached here (immutable: validated once in __post_init__, compared by their fields or, with
#: eq=False, by identity); a bounded LRU, so a long-running service does not grow without bound.  Composed
#: mechanisms (``_families_cacheable``) keep theirs on the instance.  Safe under concurrent calls (one lock).
_FAMILY_CACHE = LRUCache(128)
FAMILY_CACHE_SIZE = 128


def _cached_families(mechanism, which: str) -> list:
    """:func:`_families` of the optimal method, cached per (immutable) mechanism."""
    params = getattr(type(mechanism), "__dataclass_params__", None)
    key = None
    if params is not None and params.frozen:
        key = (type(mechanism), mechanism, which)
        try:
            hit = _FAMILY_CACHE.get(key)      # marks it most recently used (under the cache's lock)
        except TypeError:           # a field that is not hashable: no caching
            key, hit = None, None
        if hit is not None:
            return hit if isinstance(hit, PackedFamilies) else list(hit)
    elif getattr(type(mechanism), "_families_cacheable", False):
        # immutable composed mechanisms: cached on the instance (lives and dies with it)
        cache = mechanism.__dict__.setdefault("_families_cache", {})
        hit = cache.get(which)
        if hit is None:
            hit = cache[which] = tuple(_families(mechanism, "optimal", which))
        return list(hit)
    fams = _families(mechanism, "optimal", which)
    if isinstance(fams, PackedFamilies) and len(fams) <= LAZY_FAMILIES:
        fams = list(fams)                 # few families: the plain list (searched in full)
    if key is not None:
        # a PackedFamilies is read-only (its entries' objects are built once, on access): cached as it is
        _FAMILY_CACHE.put(key, fams if isinstance(fams, PackedFamilies) else tuple(fams), FAMILY_CACHE_SIZE)
    return fams


#: Packed layouts (:func:`shuffleamp.decomposition.pack`) of the last few family lists screened, keyed by the
#: families' ids (the entry holds the families, so the ids stay theirs): one ε search screens the same list
#: several times.
_PACK_CACHE = LRUCache(8)
PACK_CACHE_SIZE = 8


def _packed(families):
    """``pack(families)`` of atomic decompositions, cached (read-only arrays)."""
    packed = isinstance(families, PackedFamilies)
    key = ("packed", id(families)) if packed else tuple(map(id, families))
    hit = _PACK_CACHE.get(key)              # marks it most recently used (under the cache's lock)
    if hit is None:
        p = families.pack() if packed else pack(families)
        for x in p:
            x.setflags(write=False)
        hit = (families if packed else tuple(families), p)
        _PACK_CACHE.put(key, hit, PACK_CACHE_SIZE)
    return hit[1]
