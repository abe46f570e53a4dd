"""``leafgrad.optim``: optimizers and learning-rate schedules (issue 6; being written)."""
