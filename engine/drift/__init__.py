"""Drift between a recorded run and its replay: per-call diffs, masks, per-server counts."""
