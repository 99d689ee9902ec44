"""Helpers that candidates may import to meet PyTorch tensors from other frameworks."""
