"""The Open Inference Protocol (KServe v2 REST) on the runtime, with the binary tensor extension
(Inference-Header-Content-Length). The runtime serves one model under any {name} (the gateway
sends the function's name) and answers with MLFAAS_FUNCTION_NAME if set. Errors are {"error": "..."}."""
import json
import re

import dtypes
from errors import RuntimeFault, bad_input, not_found, not_ready

ROUTE = re.compile(r'^/v2/models/([^/]+)(?:/versions/([^/]+))?(/ready|/infer)?/?$')
SERVER = {'name': 'mlfaas-torch', 'version': '1', 'extensions': ['binary_tensor_data']}


def handle(ctx, method, path, headers, read_body):
    """-> (status, json doc, extra headers, binary tail or None). ctx: state, model, batcher, name, version, deadline()."""
    if path in ('/v2', '/v2/'):
        return _get(method, 200, SERVER)
    if path == '/v2/health/live':
        return _get(method, 200, {'live': True})
    if path == '/v2/health/ready':
        ready = ctx.is_ready()
        return _get(method, 200, {'ready': True}) if ready else _get(method, 503, {'ready': False, 'error': ctx.not_ready_why()})
    m = ROUTE.match(path)
    if not m:
        raise not_found(f'no such endpoint: {path}')
    name, version, tail = m.group(1), m.group(2), m.group(3)
    if version is not None and version != ctx.version:
        raise not_found(f'model {name!r} has no version {version!r} (served: {ctx.version!r})')
    shown = ctx.function_name or name
    if tail == '/infer':
        if method != 'POST':
            raise RuntimeFault('method_not_allowed', 405, f'{method} {path}: POST an inference request')
        if not ctx.is_ready():
            raise not_ready(f'model {shown!r} is not ready')
        return infer(ctx, shown, headers, read_body())
    if tail == '/ready':
        ready = ctx.is_ready()
        return _get(method, 200, {'name': shown, 'ready': True}) if ready else _get(method, 503, {'name': shown, 'ready': False, 'error': ctx.not_ready_why()})
    model = ctx.model()
    if model is None:
        raise not_ready(f'model {shown!r} is still loading')
    info = model.info()
    return _get(method, 200, {'name': shown, 'versions': [ctx.version], 'platform': info['platform'],
                              'inputs': info['inputs'], 'outputs': info['outputs']})


def _get(method, status, doc):
    if method not in ('GET', 'HEAD'):
        raise RuntimeFault('method_not_allowed', 405, f'{method}: this endpoint answers GET')
    return status, doc, {}, None


def parse_request(headers, body):
    """-> (JSON header doc, binary tail). The binary extension puts the JSON first, its length in a header."""
    hlen = headers.get('Inference-Header-Content-Length')
    if hlen is not None:
        if not hlen.strip().isdigit() or int(hlen) > len(body):
            raise bad_input(f'Inference-Header-Content-Length: {hlen!r} is not a length within the body ({len(body)} bytes)')
        head, tail = body[:int(hlen)], body[int(hlen):]
    else:
        head, tail = body, b''
    try:
        doc = json.loads(head.decode('utf-8'))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise bad_input(f'request body is not valid JSON: {err}') from None
    if not isinstance(doc, dict):
        raise bad_input('want a JSON object {"inputs": [...]}')
    return doc, tail


def decode_inputs(doc, tail, model):
    inputs = doc.get('inputs')
    if not isinstance(inputs, list) or not inputs:
        raise bad_input('inputs: want a non-empty array of {name, shape, datatype, data}')
    specs = {i['name']: i for i in model.inputs}
    out, pos = {}, 0
    for k, t in enumerate(inputs):
        if not isinstance(t, dict):
            raise bad_input(f'inputs[{k}]: want an object {{name, shape, datatype, data}}')
        name = t.get('name')
        if not isinstance(name, str):
            raise bad_input(f'inputs[{k}].name: want a string')
        where = f'input {name!r}'
        # the tensor's own form first (a server for any model says the same), then against the model
        dt = t.get('datatype')
        if dt not in dtypes.DATATYPES:
            raise bad_input(f'{where}: datatype {dt!r} is not one of {", ".join(dtypes.DATATYPES)}')
        shape = t.get('shape')
        if not isinstance(shape, list) or any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in shape):
            raise bad_input(f'{where}: shape must be an array of non-negative integers')
        params = t.get('parameters') or {}
        if not isinstance(params, dict):
            raise bad_input(f'{where}: parameters must be an object')
        size = params.get('binary_data_size')
        try:
            if size is not None:
                if isinstance(size, bool) or not isinstance(size, int) or size < 0 or pos + size > len(tail):
                    raise bad_input(f'{where}: parameters.binary_data_size {size!r} runs past the binary data ({len(tail)} bytes)')
                arr = dtypes.from_bytes(tail[pos:pos + size], dt, shape, where)
                pos += size
            elif 'data' in t:
                arr = dtypes.from_json(t['data'], dt, shape, where)
            else:
                raise bad_input(f'{where}: no data (want "data" or parameters.binary_data_size)')
        except ValueError as err:
            raise bad_input(str(err)) from None
        if name not in specs:
            raise bad_input(f'inputs[{k}].name: {name!r} is not an input of the model ({", ".join(specs)})')
        if name in out:
            raise bad_input(f'{where}: given twice')
        spec = specs[name]
        if dt != spec['datatype']:
            raise bad_input(f'{where}: datatype {dt} does not match the model\'s {spec["datatype"]}')
        want = spec['shape']
        if want is not None:
            if len(shape) != len(want) or any(w != -1 and w != d for w, d in zip(want, shape)):
                raise bad_input(f'{where}: shape {shape} does not match the model\'s {want} (-1: any)')
        try:
            out[name] = list(arr.reshape(-1)) if dt == 'BYTES' else dtypes.to_tensor(arr, dt)
        except ValueError as err:
            raise bad_input(f'{where}: {err}') from None
        if not shape:
            raise bad_input(f'{where}: shape [] has no batch axis; the model takes {want or "a batch axis first"}')
        if dt == 'BYTES' and len(shape) != 1:
            raise bad_input(f'{where}: BYTES inputs must have shape [n]')
    missing = [n for n in specs if n not in out]
    if missing:
        raise bad_input(f'input {missing[0]!r} is missing (the model takes {", ".join(specs)})')
    if pos != len(tail):
        raise bad_input(f'{len(tail) - pos} bytes of binary data are not claimed by any input\'s binary_data_size')
    return out


def _requested(doc):
    outs = doc.get('outputs')
    if outs is None:
        return None
    if not isinstance(outs, list) or any(not isinstance(o, dict) or not isinstance(o.get('name'), str) for o in outs):
        raise bad_input('outputs: want an array of {"name": str, "parameters": {...}}')
    return outs


def infer(ctx, shown, headers, body):
    ctx.count_request()
    doc, tail = parse_request(headers, body)
    model = ctx.model()
    requested = _requested(doc)
    if 'id' in doc and not isinstance(doc['id'], str):
        raise bad_input('id: want a string')
    params = doc.get('parameters') or {}
    if not isinstance(params, dict):
        raise bad_input('parameters: want an object')
    if requested is not None and model.output_names:
        for o in requested:
            if o['name'] not in model.output_names:
                raise bad_input(f'outputs: {o["name"]!r} is not an output of the model ({", ".join(model.output_names)})')
    inputs = decode_inputs(doc, tail, model)
    result = ctx.batcher().infer(inputs, ctx.deadline())
    produced = result['outputs']
    chosen = requested if requested is not None else [{'name': n} for n in produced]
    binary_all = bool(params.get('binary_data_output'))
    answer = {'model_name': shown, 'model_version': ctx.version, 'outputs': []}
    if 'id' in doc:
        answer['id'] = doc['id']
    chunks = []
    for o in chosen:
        if o['name'] not in produced:
            raise bad_input(f'outputs: {o["name"]!r} is not an output of the model ({", ".join(produced)})')
        arr, dt = dtypes.to_numpy(produced[o['name']])
        entry = {'name': o['name'], 'datatype': dt, 'shape': list(arr.shape)}
        op = o.get('parameters') or {}
        if (op.get('binary_data') if isinstance(op, dict) and 'binary_data' in op else binary_all):
            raw = dtypes.to_bytes(arr, dt)
            entry['parameters'] = {'binary_data_size': len(raw)}
            chunks.append(raw)
        else:
            entry['data'] = dtypes.json_data(arr, dt)
        answer['outputs'].append(entry)
    extra = {'X-Batch-Size': str(result['batchSize']), 'X-Batch-Latency-Ms': str(result['batchLatencyMs']),
             'X-Queue-Ms': str(result['queueMs'])}
    return 200, answer, extra, (b''.join(chunks) if chunks else None)


def error_doc(fault):
    return {'error': fault.message}

