"""Op table entries and frontends: reductions (filled in by issue 3)."""
