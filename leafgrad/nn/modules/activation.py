"""``leafgrad.nn`` modules: activation (issue 6; being written)."""

__all__: list = []
