#!/usr/bin/python3
"""Export torchvision's MobileNetV2 with RANDOM weights to ONNX for the image-classify function.

    /usr/bin/python3 functions/image-classify/export.py

The weights are torchvision's default random initialisation under torch.manual_seed(0); nothing
is downloaded. The function exists for latency and scaling work (a realistic graph of ~300 MFLOPs
per image, 3.5 M parameters), so its predictions are meaningless. Writes model.onnx (input
"image" [batch, 3, 224, 224] float32, output "logits" [batch, 1000]) and labels.json
("class-0".."class-999": there are no real ImageNet labels because there are no real weights).
"""
import json
import os

import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v2(weights=None)  # random init, no download
    model.eval()
    path = os.path.join(HERE, "model.onnx")
    torch.onnx.export(
        model, torch.zeros(1, 3, 224, 224), path,
        input_names=["image"], output_names=["logits"],
        dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
        opset_version=13, do_constant_folding=True,
    )
    with open(os.path.join(HERE, "labels.json"), "w") as f:
        json.dump([f"class-{i}" for i in range(1000)], f)
        f.write("\n")
    params = sum(p.numel() for p in model.parameters())
    print(f"wrote {path}: {os.path.getsize(path)} bytes, {params} parameters")


if __name__ == "__main__":
    main()
