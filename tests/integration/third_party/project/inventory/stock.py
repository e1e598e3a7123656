"""Stock levels of the warehouse."""

REORDER_LEVEL = 12


def needs_reorder(count: int) -> bool:
    return count < REORDER_LEVEL
