"""``leafgrad.nn`` modules: pooling (issue 6; being written)."""

__all__: list = []
