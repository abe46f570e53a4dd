"""More of ``torch.nn.functional``: activations, losses and attention (being written)."""

__all__: list = []
