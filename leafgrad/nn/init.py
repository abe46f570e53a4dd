"""``leafgrad.nn.init``: PyTorch's initialisers (issue 6; being written)."""
