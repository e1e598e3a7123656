"""Grading trials: scoring a finished trial, judge passes, re-judging and anchors."""
