"""``leafgrad.nn.utils`` (issue 6; being written)."""
