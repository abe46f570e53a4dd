"""Convolution, pooling, interpolation and normalisation layers for ``nn.functional``."""
