"""One LSTM cell step with explicit state: returns (h_new, c_new).
gates = x W_ih^T + b_ih + h W_hh^T + b_hh, split as (i, f, g, o);
c_new = sigmoid(f) * c + sigmoid(i) * tanh(g);  h_new = sigmoid(o) * tanh(c_new)."""
import torch
import torch.nn as nn

BATCH = 2048
INPUT_SIZE = 2048
HIDDEN = 2048
SCALABLE = ("BATCH", "INPUT_SIZE", "HIDDEN")


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.ih = nn.Linear(input_size, 4 * hidden_size)
        self.hh = nn.Linear(hidden_size, 4 * hidden_size)

    def forward(self, x, h, c):
        gates = self.ih(x) + self.hh(h)
        i, f, g, o = gates.chunk(4, dim=1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        return h_new, c_new


def get_inputs():
    return [torch.rand(BATCH, INPUT_SIZE), torch.rand(BATCH, HIDDEN), torch.rand(BATCH, HIDDEN)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN]
