#!/usr/bin/python3
"""Writes test/fixtures/rapp/linear.onnx: a latency model with known weights for the tests (no
data involved): features [ln batch, ln quota] -> ln latency = ln 20 + 0.3 ln batch - ln quota, i.e.
latency = 20 ms * batch^0.3 / quota. Exported as bench/rapp/v100_cv.py exports (opset 13, dynamic
batch). Usage: /usr/bin/python3 bench/rapp/make_test_model.py OUT.onnx"""
import math
import sys

import torch

lin = torch.nn.Linear(2, 1)
with torch.no_grad():
    lin.weight.copy_(torch.tensor([[0.3, -1.0]]))
    lin.bias.copy_(torch.tensor([math.log(20.0)]))


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = lin

    def forward(self, x):
        return self.lin(x).squeeze(-1)


torch.onnx.export(M(), torch.zeros(2, 2), sys.argv[1], input_names=["x"], output_names=["ln_latency_ms"], dynamic_axes={"x": {0: "n"}, "ln_latency_ms": {0: "n"}}, opset_version=13)
