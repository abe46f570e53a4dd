"""``leafgrad.nn`` modules: loss (issue 6; being written)."""

__all__: list = []
