"""``leafgrad.nn`` modules: sparse (issue 6; being written)."""

__all__: list = []
