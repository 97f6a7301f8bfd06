"""Loads the function's model and runs it: function/handler.py's load() (an nn.Module), else a
TorchScript file (torch.jit.load) or a torch.export program (torch >= 2.1). The signature (input
names, datatypes, shapes) comes from handler.py's `inputs` / `outputs`, else function/signature.json,
else the forward() argument names (FP32, shape unknown); output datatypes and shapes from a
warm-up run when every input's shape is known."""
import importlib.util
import inspect
import json
import os
import zipfile

import numpy as np
import torch

import dtypes


class ModelLoadError(Exception):
    """The model cannot be served; the message says why and what to do."""


def load_handler(function_dir):
    path = os.path.join(function_dir, 'handler.py')
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location('handler', path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for k in ('load', 'preprocess', 'postprocess'):
        if hasattr(mod, k) and not callable(getattr(mod, k)):
            raise ModelLoadError(f'{path}: {k} is not a function')
    return mod


def is_export_archive(path):
    """A torch.export program (.pt2) rather than TorchScript: a zip without TorchScript's code/."""
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
    if any('/code/' in n or n.endswith('constants.pkl') for n in names):
        return False
    return path.endswith('.pt2') or any('exported_program' in n or n.endswith('models/model.json') for n in names)


def _load_module(function_dir, model_path, handler, device):
    if handler is not None and hasattr(handler, 'load'):
        return handler.load(), 'handler.py load()'
    candidates = [model_path] if model_path else [os.path.join(function_dir, f) for f in ('model.pt', 'model.pt2')]
    path = next((p for p in candidates if os.path.exists(p)), None)
    if path is None:
        raise ModelLoadError(f'no model: want {" or ".join(candidates)} (TorchScript or torch.export), '
                             'or function/handler.py with load() returning an nn.Module')
    if is_export_archive(path):
        if not hasattr(torch, 'export') or not hasattr(torch.export, 'load'):
            raise ModelLoadError(f'{path} is a torch.export program: it needs torch >= 2.1, and this runtime has torch '
                                 f'{torch.__version__}. Save the model with torch.jit.script/trace + torch.jit.save '
                                 'instead, or run on a machine with torch >= 2.1 (MLFAAS_PYTHON)')
        return torch.export.load(path).module(), f'torch.export {os.path.basename(path)}'
    try:
        return torch.jit.load(path, map_location=device), f'TorchScript {os.path.basename(path)}'
    except RuntimeError as err:
        raise ModelLoadError(f'{path}: not a TorchScript file torch {torch.__version__} can load: {err}') from None


def _forward_names(module):
    try:
        if isinstance(module, torch.jit.ScriptModule):
            return [a.name for a in module.forward.schema.arguments[1:]]
        params = inspect.signature(module.forward).parameters.values()
        return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (AttributeError, TypeError, ValueError):
        return ['input0']


def _check_spec(spec, what):
    if not isinstance(spec, list) or not spec:
        raise ModelLoadError(f'{what}: want a non-empty list of {{name, datatype, shape}}')
    out = []
    for i, s in enumerate(spec):
        if not isinstance(s, dict) or not isinstance(s.get('name'), str):
            raise ModelLoadError(f'{what}[{i}]: want {{"name": str, "datatype": str, "shape": [int]}}')
        dt = s.get('datatype', 'FP32')
        if dt not in dtypes.DATATYPES:
            raise ModelLoadError(f'{what}[{i}].datatype: {dt!r} is not one of {", ".join(dtypes.DATATYPES)}')
        shape = s.get('shape')
        if shape is not None and (not isinstance(shape, list) or any(not isinstance(d, int) or d < -1 or d == 0 for d in shape)):
            raise ModelLoadError(f'{what}[{i}].shape: {shape!r}: want a list of positive ints, -1 for a dynamic dim')
        out.append({'name': s['name'], 'datatype': dt, 'shape': list(shape) if shape is not None else None})
    return out


class Model:
    def __init__(self, module, source, inputs, output_names, batchable, device):
        self.module = module
        self.source = source
        self.inputs = inputs
        self.output_names = output_names
        self.outputs = [{'name': n, 'datatype': 'FP32', 'shape': [-1]} for n in (output_names or [])]
        self.batchable = batchable
        self.device = device

    @staticmethod
    def load(function_dir, model_path, device='cpu', log=lambda _: None):
        handler = load_handler(function_dir)
        module, source = _load_module(function_dir, model_path, handler, device)
        if not callable(module):
            raise ModelLoadError(f'{source}: want a callable nn.Module, got {type(module).__name__}')
        if isinstance(module, torch.nn.Module):
            module = module.to(device).eval()
        sig_file = os.path.join(function_dir, 'signature.json')
        sig = {}
        if handler is not None and hasattr(handler, 'inputs'):
            sig = {'inputs': handler.inputs, 'outputs': getattr(handler, 'outputs', None)}
        elif os.path.exists(sig_file):
            with open(sig_file, encoding='utf8') as f:
                sig = json.load(f)
        if sig.get('inputs') is not None:
            inputs = _check_spec(sig['inputs'], 'inputs')
        else:
            inputs = [{'name': n, 'datatype': 'FP32', 'shape': None} for n in _forward_names(module)]
        outs = sig.get('outputs')
        output_names = [o['name'] if isinstance(o, dict) else str(o) for o in outs] if outs else None
        batchable = bool(getattr(handler, 'batchable', sig.get('batchable', True)))
        return Model(module, source, inputs, output_names, batchable, device), handler

    @property
    def shapes_known(self):
        return all(i['shape'] is not None and -1 not in i['shape'][1:] for i in self.inputs)

    def info(self):
        shape = lambda s: s if s is not None else [-1]  # noqa: E731
        return {
            'inputs': [{'name': i['name'], 'datatype': i['datatype'], 'shape': shape(i['shape'])} for i in self.inputs],
            'outputs': self.outputs, 'batchable': self.batchable, 'platform': 'pytorch_torchscript',
        }

    def zeros(self, rows):
        """A batch of `rows` zero instances, one per input (the warm-up and /_/profile)."""
        out = {}
        for i in self.inputs:
            dims = [rows] + i['shape'][1:]
            if i['datatype'] == 'BYTES':
                out[i['name']] = [b''] * rows
            else:
                out[i['name']] = dtypes.to_tensor(np.zeros(dims, dtype=dtypes.NUMPY[i['datatype']]), i['datatype'])
        return out

    def run(self, inputs):
        """One forward pass: inputs by name (batch axis first) -> outputs by name, on the CPU."""
        args = []
        for i in self.inputs:
            v = inputs[i['name']]
            args.append(v.to(self.device, non_blocking=True) if isinstance(v, torch.Tensor) else v)
        with torch.inference_mode():
            result = self.module(*args)
            if self.device != 'cpu':
                torch.cuda.synchronize()
        return self._name_outputs(result)

    def _name_outputs(self, result):
        if isinstance(result, dict):
            named = {str(k): v for k, v in result.items()}
        elif isinstance(result, (tuple, list)) and result and all(isinstance(v, torch.Tensor) for v in result):
            names = self.output_names or [f'output{k}' for k in range(len(result))]
            named = dict(zip(names, result))
        else:
            named = {(self.output_names or ['output0'])[0]: result}
        return {k: (v.detach().cpu() if isinstance(v, torch.Tensor) else v) for k, v in named.items()}

    def warm_up(self):
        """One batch-1 run of zeros; records each output's datatype and shape. False when shapes are unknown."""
        if not self.shapes_known:
            return False
        out = self.run(self.zeros(1))
        self.outputs = []
        for name, v in out.items():
            arr, dt = dtypes.to_numpy(v)
            shape = list(arr.shape)
            if self.batchable and shape:
                shape[0] = -1
            self.outputs.append({'name': name, 'datatype': dt, 'shape': shape})
        self.output_names = [o['name'] for o in self.outputs]
        return True
