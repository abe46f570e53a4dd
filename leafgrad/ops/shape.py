"""Op table entries and frontends: shape (filled in by issue 3)."""
