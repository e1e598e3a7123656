"""The store's write wing: the writer, its queue and the rows it derives."""
