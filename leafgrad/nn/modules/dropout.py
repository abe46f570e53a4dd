"""``leafgrad.nn`` modules: dropout (issue 6; being written)."""

__all__: list = []
