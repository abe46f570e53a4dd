"""``leafgrad.nn`` modules: normalization (issue 6; being written)."""

__all__: list = []
