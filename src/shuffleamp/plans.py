"""Deprecated alias of :mod:`shuffleamp.config` (plans moved there)."""

from .config import *  # noqa: F401,F403  # MERGE: delete once every test imports shuffleamp.config
from .config import Collection, PlanError, evaluate_plan, format_table, load_plan, parse_plan  # noqa: F401
