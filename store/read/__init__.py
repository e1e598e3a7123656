"""The store's read wing: queries and the reader over a run database."""
