"""Default handler of a new ml-inference-torch function: a small random MLP so that the function
answers as soon as it is created. Replace load() with your model (or delete it and put a
TorchScript file at model.pt with a signature.json).

load() -> nn.Module: built once per replica, put in eval mode, run under torch.inference_mode.
inputs: one {name, datatype, shape} per forward() argument, in order; shape includes the batch
  axis (-1). Datatypes are the Open Inference Protocol's (FP32, INT64, BOOL, ...).
outputs (optional): names for the outputs (a tensor, a tuple of tensors, or a dict).
batchable (optional, default True): False runs every request alone.
preprocess(body: bytes, headers: dict, ctx) -> list of instances, and
postprocess(outputs: {name: tensor, one row per instance}, instances, ctx) -> list of predictions
  (optional) replace the v1 defaults, ctx['defaults']['preprocess'|'postprocess']. The Open
  Inference Protocol (/v2/...) passes tensors as they are.
"""
import torch

inputs = [{'name': 'x', 'datatype': 'FP32', 'shape': [-1, 4]}]
outputs = [{'name': 'scores'}]


def load():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3), torch.nn.Softmax(dim=-1))
