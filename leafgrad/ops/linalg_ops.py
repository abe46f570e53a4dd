"""Op table entries and frontends: linalg_ops (filled in by issue 3)."""
