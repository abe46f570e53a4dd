"""``leafgrad.nn`` modules: linear (issue 6; being written)."""

__all__: list = []
