"""resnet-torch: torchvision's ResNet-18 with random weights (weights=None: nothing is downloaded),
seeded so that every replica builds the same model. Served by the ml-inference-torch runtime.

Input 'image': float32 [batch, 3, 224, 224] (a normalised RGB image; a flat array of 150528
values per instance is reshaped). Output 'logits': [batch, 1000]; v1 answers the argmax with
labels.json (ImageNet's class names, from torchvision's metadata).

Where torchvision is not installed (a bare torch venv), the same ResNet-18 architecture is built
here (same layers and shapes; its random initialisation differs from torchvision's)."""
import torch

inputs = [{'name': 'image', 'datatype': 'FP32', 'shape': [-1, 3, 224, 224]}]
outputs = [{'name': 'logits'}]


def load():
    torch.manual_seed(0)
    try:
        import torchvision
    except ImportError:
        return _resnet18()
    return torchvision.models.resnet18(weights=None)


class _Block(torch.nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        nn = torch.nn
        self.body = nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                                  nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                     if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x):
        return torch.relu(self.body(x) + self.skip(x))


def _resnet18():
    nn = torch.nn
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [_Block(cin, cout, stride), _Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000)]
    return nn.Sequential(*layers)
