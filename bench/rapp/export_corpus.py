#!/usr/bin/python3
"""Exports torchvision architectures (random weights: latency does not depend on them) to ONNX
for the CPU latency corpus (issue 12). The models are written to OUT (outside the repository);
only their measurements are kept, with the script that made them.

Usage: /usr/bin/python3 bench/rapp/export_corpus.py OUT [NAME ...]   (default: CORPUS)
"""
import os
import sys

import torch
import torchvision

# small to mid-sized architectures of different shapes (a 2-core CPU must run them many times)
CORPUS = [
    "resnet18", "resnet34", "resnet50", "resnext50_32x4d", "wide_resnet50_2",
    "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large",
    "shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0",
    "squeezenet1_0", "squeezenet1_1", "mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3",
    "efficientnet_b0", "efficientnet_b1", "efficientnet_b2",
    "regnet_x_400mf", "regnet_x_800mf", "regnet_x_1_6gf", "regnet_y_400mf", "regnet_y_800mf", "regnet_y_1_6gf",
    "densenet121", "googlenet", "alexnet", "vgg11", "convnext_tiny",
]


def export(name, out):
    torch.manual_seed(0)
    kw = {"aux_logits": False, "init_weights": True} if name == "googlenet" else {}
    model = getattr(torchvision.models, name)(weights=None, **kw).eval()
    x = torch.zeros(1, 3, 224, 224)
    path = os.path.join(out, f"{name}.onnx")
    torch.onnx.export(model, x, path, input_names=["input"], output_names=["logits"], dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, opset_version=13)
    return path


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name in sys.argv[2:] or CORPUS:
        print(export(name, out), flush=True)
