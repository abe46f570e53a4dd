"""``leafgrad.nn`` modules: rnn (issue 6; being written)."""

__all__: list = []
