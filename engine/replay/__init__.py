"""``proctor replay``: a recorded run's tool calls made again against the suite's servers now."""
