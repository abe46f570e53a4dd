"""Op table entries and frontends: elementwise (filled in by issue 3)."""
