"""``leafgrad.nn.functional``: activations, losses, convolutions, pooling, normalisation."""
