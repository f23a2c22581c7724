"""Hypothesis example counts of the suite, scaled by one settings profile.

``tests/conftest.py`` registers two Hypothesis settings profiles: ``"ci"`` (the default; every property runs
the count its test names) and ``"thorough"`` (ten times as many).  Choose one with
``pytest --hypothesis-profile=thorough`` or ``SHUFFLEAMP_HYPOTHESIS_PROFILE=thorough``.  A property declares
its CI count through :func:`examples`, so one switch scales the whole suite.
"""

from __future__ import annotations

from hypothesis import settings

#: max_examples of the "ci" profile: the unit of :func:`examples`.
CI_MAX_EXAMPLES = 100


def examples(ci: int) -> int:
    """The number of examples of a property that runs ``ci`` examples under the "ci" profile."""
    return max(1, round(ci * settings.default.max_examples / CI_MAX_EXAMPLES))
