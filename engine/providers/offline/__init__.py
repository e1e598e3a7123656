"""The offline agent: plans tool calls and answers without a model, for demos and CI."""
