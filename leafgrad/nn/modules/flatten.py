"""``leafgrad.nn`` modules: flatten (issue 6; being written)."""

__all__: list = []
