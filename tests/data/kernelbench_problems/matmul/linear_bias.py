import torch
import torch.nn as nn


class Model(nn.Module):
    """A linear layer with bias; the sizes are constructor arguments."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


batch_size = 128
in_features = 512
out_features = in_features * 2  # derived: follows in_features when it is scaled


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
