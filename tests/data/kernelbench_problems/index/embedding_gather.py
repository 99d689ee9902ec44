"""Embedding lookup of integer token ids, then a scale."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int):
        super().__init__()
        self.table = nn.Embedding(num_embeddings, embedding_dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.table(ids) * 2.0


batch_size = 32
seq_len = 256
num_embeddings = 1000
embedding_dim = 128


def get_inputs():
    return [torch.randint(0, num_embeddings, (batch_size, seq_len))]


def get_init_inputs():
    return [num_embeddings, embedding_dim]
