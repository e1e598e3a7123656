"""Console view models: pure state and text the screens render (no Textual here)."""
