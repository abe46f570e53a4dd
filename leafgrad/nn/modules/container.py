"""``leafgrad.nn`` modules: container (issue 6; being written)."""

__all__: list = []
