"""Top-1 mixture of experts over tokens (T, D):
router logits -> softmax -> argmax picks one expert per token; the token's output is
gate_prob * expert(x), where each expert is Linear(D, HIDDEN) -> ReLU -> Linear(HIDDEN, D)."""
import torch
import torch.nn as nn

TOKENS = 4096
DIM = 1024
HIDDEN = 6144
NUM_EXPERTS = 8
SCALABLE = ("TOKENS", "DIM", "HIDDEN")


class Model(nn.Module):
    def __init__(self, dim, hidden, num_experts):
        super().__init__()
        self.router = nn.Linear(dim, num_experts)
        self.experts = nn.ModuleList(
            [nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, dim))
             for _ in range(num_experts)])

    def forward(self, x):
        probs = torch.softmax(self.router(x), dim=-1)
        idx = torch.argmax(probs, dim=-1)
        gate = probs.gather(1, idx.unsqueeze(1))
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            sel = torch.nonzero(idx == e, as_tuple=True)[0]
            if sel.numel() > 0:
                out[sel] = expert(x[sel]) * gate[sel]
        return out


def get_inputs():
    return [torch.rand(TOKENS, DIM)]


def get_init_inputs():
    return [DIM, HIDDEN, NUM_EXPERTS]
