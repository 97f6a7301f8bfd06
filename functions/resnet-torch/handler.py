"""resnet-torch: torchvision's ResNet-18 with random weights (weights=None: nothing is downloaded),
seeded so that every replica builds the same model. Served by the ml-inference-torch runtime.

Input 'image': float32 [batch, 3, 224, 224] (a normalised RGB image; a flat array of 150528
values per instance is reshaped). Output 'logits': [batch, 1000]; v1 answers the argmax with
labels.json (ImageNet's class names, from torchvision's metadata)."""
import torch
import torchvision

inputs = [{'name': 'image', 'datatype': 'FP32', 'shape': [-1, 3, 224, 224]}]
outputs = [{'name': 'logits'}]


def load():
    torch.manual_seed(0)
    return torchvision.models.resnet18(weights=None)
