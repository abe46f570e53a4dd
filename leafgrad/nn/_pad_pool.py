"""``torch.nn.functional`` padding, 3-d pooling and channel dropouts (being written)."""

__all__: list = []
