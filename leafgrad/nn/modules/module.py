"""``leafgrad.nn`` modules: module (issue 6; being written)."""

__all__: list = []
