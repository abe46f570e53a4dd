"""``leafgrad.nn`` modules: transformer (issue 6; being written)."""

__all__: list = []
