"""tinyq's own tests; run with ``python -m pytest tinyq/tests``."""
