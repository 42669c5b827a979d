"""Small PyTorch models for tests/tools/export_profile_test.cc."""

import torch


class SharedFrozenUnused(torch.nn.Module):
    """One weight shared by two layers, a frozen layer and an unused one."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(8, 16)
        self.hidden = torch.nn.Linear(16, 16)
        self.frozen = torch.nn.Linear(16, 16)
        self.frozen.requires_grad_(False)
        self.unused = torch.nn.Linear(16, 4)
        self.out = torch.nn.Linear(16, 16)
        self.out.weight = self.hidden.weight  # shared: reduced once

    def forward(self, x):
        h = torch.relu(self.embed(x))
        h = torch.relu(self.hidden(h))
        return self.out(self.frozen(h))


def shared_frozen_unused():
    return SharedFrozenUnused()
