"""The v1 body: {"instances": [...]}, {"data": [...]} or a bare array in, {"predictions": [...]} out,
as ml-inference's codec.js. function/handler.py's preprocess(body, headers, ctx) -> instances and
postprocess(outputs, instances, ctx) -> predictions replace the defaults (ctx["defaults"] has them)."""
import json
import os

import numpy as np
import torch

import dtypes
from errors import bad_input


def parse_json(body):
    try:
        return json.loads(body.decode('utf-8'))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise bad_input(f'request body is not valid JSON: {err}') from None


def default_preprocess(body, headers, ctx):
    doc = parse_json(body)
    if isinstance(doc, list):
        if doc and isinstance(doc[0], (int, float)) and not isinstance(doc[0], bool):
            return [doc]
        return _non_empty(doc, 'the body array')
    if isinstance(doc, dict):
        if isinstance(doc.get('instances'), list):
            return _non_empty(doc['instances'], '"instances"')
        if isinstance(doc.get('data'), list):
            return [doc['data']]
    raise bad_input('want a JSON body {"instances": [[...], ...]}, {"data": [...]} or a bare array of instances')


def default_postprocess(outputs, instances, ctx):
    """One output: with labels.json as long as the row, {label, index, score} by argmax; else the row.
    Several outputs: {outputName: row}."""
    names = list(outputs)
    labels = ctx.get('labels')
    preds = []
    for i in range(len(instances)):
        if len(names) == 1:
            row = _row(outputs[names[0]], i)
            if labels and isinstance(row, list) and len(row) == len(labels) and all(isinstance(x, (int, float)) for x in row):
                k = int(np.argmax(row))
                preds.append({'label': labels[k], 'index': k, 'score': row[k]})
            else:
                preds.append(row)
        else:
            preds.append({n: _row(outputs[n], i) for n in names})
    return preds


def _row(v, i):
    if isinstance(v, torch.Tensor):
        r = v[i] if v.dim() > 0 else v
        return r.float().tolist() if r.dtype in (torch.float16, torch.bfloat16) else r.tolist()
    item = v[i]
    return item.decode('utf-8', 'replace') if isinstance(item, bytes) else item


def _non_empty(a, what):
    if not a:
        raise bad_input(f'{what} is empty; want at least one instance')
    return a


def load_labels(function_dir):
    path = os.path.join(function_dir, 'labels.json')
    if not os.path.exists(path):
        return None
    with open(path, encoding='utf8') as f:
        labels = json.load(f)
    if not isinstance(labels, list):
        raise ValueError(f'{path}: want a JSON array of class names')
    return [str(x) for x in labels]


def to_batch(instances, model):
    """Instances -> inputs by name with the batch axis first. An instance is a nested array (or a flat
    one of the right size, reshaped) for a one-input model, {inputName: array} for several, or a tensor."""
    by_name = {i['name']: [] for i in model.inputs}
    one = len(model.inputs) == 1
    for k, inst in enumerate(instances):
        if one and not isinstance(inst, dict):
            inst = {model.inputs[0]['name']: inst}
        if not isinstance(inst, dict):
            raise bad_input(f'instance {k}: want an object {{{", ".join(repr(i["name"]) for i in model.inputs)}}} (the model has several inputs)')
        for spec in model.inputs:
            if spec['name'] not in inst:
                raise bad_input(f'instance {k}: input {spec["name"]!r} is missing')
            by_name[spec['name']].append(_instance(inst[spec['name']], spec, k))
        extra = set(inst) - set(by_name)
        if extra:
            raise bad_input(f'instance {k}: {sorted(extra)[0]!r} is not an input of the model ({", ".join(by_name)})')
    out = {}
    for spec in model.inputs:
        rows = by_name[spec['name']]
        if spec['datatype'] == 'BYTES':
            out[spec['name']] = [r for r in rows]
            continue
        shapes = {tuple(r.shape) for r in rows}
        if len(shapes) > 1:
            raise bad_input(f'input {spec["name"]!r}: instances have different shapes {sorted(shapes)}')
        out[spec['name']] = torch.stack(rows) if isinstance(rows[0], torch.Tensor) else dtypes.to_tensor(np.stack(rows), spec['datatype'])
    return out


def _instance(value, spec, k):
    where = f'instance {k}, input {spec["name"]!r}'
    if spec['datatype'] == 'BYTES':
        return value.encode() if isinstance(value, str) else value
    if isinstance(value, torch.Tensor):
        return value
    dims = spec['shape'][1:] if spec['shape'] is not None else None
    try:
        arr = np.asarray(value)  # integers stay integers (an INT64 input keeps all 64 bits)
    except (ValueError, TypeError):
        raise bad_input(f'{where}: want a (nested) array of numbers of equal-length rows') from None
    if arr.dtype.kind not in 'biuf' or (arr.dtype.kind == 'f' and not np.all(np.isfinite(arr))):
        raise bad_input(f'{where}: a value is not a finite number (or the rows differ in length)')
    if spec['datatype'] not in ('FP16', 'FP32', 'FP64', 'BOOL') and arr.dtype.kind == 'f' and not np.all(np.mod(arr, 1) == 0):
        raise bad_input(f'{where}: {spec["datatype"]} values must be integers')
    if dims is not None and -1 not in dims:
        want = int(np.prod(dims)) if dims else 1
        if list(arr.shape) != dims:
            if arr.ndim != 1 or arr.size != want:
                raise bad_input(f'{where}: has shape {list(arr.shape)} ({arr.size} values); the model takes {dims} ({want} values)')
            arr = arr.reshape(dims)
    elif dims is not None and arr.ndim != len(dims):
        raise bad_input(f'{where}: has rank {arr.ndim}; the model takes shape {dims}')
    return arr.astype(dtypes.NUMPY[spec['datatype']])
