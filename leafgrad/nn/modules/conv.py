"""``leafgrad.nn`` modules: conv (issue 6; being written)."""

__all__: list = []
