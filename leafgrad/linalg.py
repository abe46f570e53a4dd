"""``leafgrad.linalg``: PyTorch's ``torch.linalg`` over the op table."""
