#!/usr/bin/python3
"""Exports torchvision architectures (random weights: latency does not depend on them) to ONNX
for the CPU latency corpus (issue 12). The models are written to OUT (outside the repository);
only their measurements are kept, with the script that made them.

Usage: /usr/bin/python3 bench/rapp/export_corpus.py OUT [NAME ...]   (default: CORPUS and SMALL)
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


def mlp(*widths):
    layers = []
    for a, b in zip(widths, widths[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1])


def small_cnn(channels, size, classes=10):
    c1, c2 = 32, 64
    return torch.nn.Sequential(
        torch.nn.Conv2d(channels, c1, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(c1, c2, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(c2 * (size // 4) ** 2, 128), torch.nn.ReLU(), torch.nn.Linear(128, classes))


def lenet5():
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 6, 5, padding=2), torch.nn.Tanh(), torch.nn.AvgPool2d(2),
        torch.nn.Conv2d(6, 16, 5), torch.nn.Tanh(), torch.nn.AvgPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(16 * 5 * 5, 120), torch.nn.Tanh(), torch.nn.Linear(120, 84), torch.nn.Tanh(), torch.nn.Linear(84, 10))


# small models, where a request's fixed cost (HTTP, JSON, batching) is a large part of its latency:
# the functions a CPU node mostly serves (digits-classify is one; it is not among them)
SMALL = {
    "mlp_64_128_10": (lambda: mlp(64, 128, 10), (64,)),
    "mlp_256_64_64_10": (lambda: mlp(256, 64, 64, 10), (256,)),
    "mlp_784_256_10": (lambda: mlp(784, 256, 10), (784,)),
    "mlp_784_512_512_10": (lambda: mlp(784, 512, 512, 10), (784,)),
    "mlp_3072_1024_10": (lambda: mlp(3072, 1024, 10), (3072,)),
    "lenet5": (lenet5, (1, 28, 28)),
    "cnn_cifar": (lambda: small_cnn(3, 32), (3, 32, 32)),
    "resnet18_64px": (lambda: torchvision.models.resnet18(weights=None), (3, 64, 64)),
    "mobilenet_v2_96px": (lambda: torchvision.models.mobilenet_v2(weights=None), (3, 96, 96)),
    "squeezenet1_1_112px": (lambda: torchvision.models.squeezenet1_1(weights=None), (3, 112, 112)),
}


def export(name, out):
    torch.manual_seed(0)
    if name in SMALL:
        build, shape = SMALL[name]
        model = build().eval()
        x = torch.zeros(1, *shape)
    else:
        kw = {"aux_logits": False, "init_weights": True} if name == "googlenet" else {}
        model = getattr(torchvision.models, name)(weights=None, **kw).eval()
        x = torch.zeros(1, 3, 224, 224)
    path = os.path.join(out, f"{name}.onnx")
    torch.onnx.export(model, x, path, input_names=["input"], output_names=["logits"], dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, opset_version=13)
    return path


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name in sys.argv[2:] or CORPUS + list(SMALL):
        print(export(name, out), flush=True)
