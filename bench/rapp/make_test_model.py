#!/usr/bin/python3
"""Writes the test fixtures in test/fixtures/rapp/ (no data involved):
- linear.onnx: a latency model with known weights: features [ln batch, ln quota] -> ln latency =
  ln 20 + 0.3 ln batch - ln quota, i.e. 20 ms * batch^0.3 / quota; exported as bench/rapp/v100_cv.py
  exports (opset 13, dynamic batch);
- tiny-cnn.onnx: a small CNN whose parameters (198) and FLOPs at batch 1 (23,056) are known, for
  the ONNX feature extractor: [n,3,8,8] -> Conv 3->4 k3 -> Relu -> Conv 4->4 k3 groups 2 ->
  GlobalAveragePool -> Flatten -> Gemm 4->2.
Usage: /usr/bin/python3 bench/rapp/make_test_model.py DIR"""
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


out = sys.argv[1]
torch.onnx.export(M(), torch.zeros(2, 2), f"{out}/linear.onnx", input_names=["x"], output_names=["ln_latency_ms"], dynamic_axes={"x": {0: "n"}, "ln_latency_ms": {0: "n"}}, opset_version=13)

torch.manual_seed(0)
cnn = torch.nn.Sequential(
    torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(),
    torch.nn.Conv2d(4, 4, 3, padding=1, groups=2),
    torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 2),
)
torch.onnx.export(cnn, torch.zeros(1, 3, 8, 8), f"{out}/tiny-cnn.onnx", input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}}, opset_version=13)
