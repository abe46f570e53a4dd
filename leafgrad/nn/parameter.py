"""``leafgrad.nn.Parameter`` (issue 6; being written)."""

__all__: list = []
