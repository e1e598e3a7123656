"""Running suites: the matrix, the agent loop, the runner, commands and the session that ties them."""
