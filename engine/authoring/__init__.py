"""Writing suites with a model's help (``proctor init --model``); every draft is for review."""
