"""Ruler 3 (issue 57): a repeat of an answered call fails, claims are checked against the world's
effects, and what the ruler cannot account for fails. It stands alone: one assignment of calls to gold
nodes per episode, and ruler 1's validator is never imported. Its parts: ``verdict`` (the judge),
``calls`` (repeats, unoffered names, vacuous calls), ``claims`` (actions said against effects) and
``answer`` (look-alike signs, currencies, a second value, a restated result)."""
from .verdict import Ruler3Verdict, criterion_of, judge, reasons

__all__ = ["Ruler3Verdict", "criterion_of", "judge", "reasons"]
