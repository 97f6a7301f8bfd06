"""What the non-v2 routes do: GET / (the model's description), v1 inference, POST /_/profile, and
request bodies' Content-Encoding. server.py is the HTTP plumbing around them."""
import json
import time
import zlib

from errors import RuntimeFault, bad_input, not_ready
from stats import r3


def decode_body(body, encoding, limit):
    """Content-Encoding gzip / deflate (Triton's client compresses with request_compression_algorithm),
    inflated to at most `limit` bytes."""
    enc = encoding.strip().lower()
    if enc in ('', 'identity'):
        return body
    if enc not in ('gzip', 'deflate'):
        raise RuntimeFault('unsupported_media_type', 415, f'Content-Encoding: {encoding!r} is not served (gzip, deflate or none)')
    d = zlib.decompressobj(16 + zlib.MAX_WBITS if enc == 'gzip' else zlib.MAX_WBITS)
    try:
        out = d.decompress(body, limit + 1)
    except zlib.error as err:
        raise bad_input(f'Content-Encoding: the body is not valid {enc}: {err}') from None
    if len(out) > limit:
        raise RuntimeFault('payload_too_large', 413, f'the inflated request body exceeds {limit} bytes (MAX_BODY_BYTES)')
    return out


def describe(app):
    m = app.model
    first = m.inputs[0] if m else None
    return {
        'ready': app.ready,
        'model': None if m is None else {
            'input': first['name'], 'shape': ['batch', *first['shape'][1:]] if first['shape'] else None,
            'outputs': m.output_names or [], 'inputs': m.info()['inputs'], 'source': m.source, 'device': m.device,
        },
        'usage': 'POST {"instances": [[...], ...]} or {"data": [...]}; answer {"predictions": [...]}; '
                 'or the Open Inference Protocol: POST /v2/models/<name>/infer',
    }


def infer_v1(app, body, headers, deadline):
    if app.draining:
        raise RuntimeFault('shutting_down', 503, 'the function is shutting down')
    if not app.is_ready():
        raise not_ready('the model is still loading; retry after GET /_/ready answers 200')
    import v1  # noqa: PLC0415 -- loaded with torch, after the port is announced
    app.stats.count('requests')
    h = app.handler
    ctx = {'labels': app.labels, 'model': app.model.info(), 'defaults': {'preprocess': v1.default_preprocess, 'postprocess': v1.default_postprocess}}
    try:
        pre = getattr(h, 'preprocess', None) or v1.default_preprocess
        instances = pre(body, dict(headers.items()), ctx)
    except RuntimeFault:
        raise
    except Exception as err:  # noqa: BLE001 -- a handler's preprocess that throws is the client's bad input
        raise bad_input(f'preprocess: {err}') from None
    if not isinstance(instances, list) or not instances:
        raise bad_input('preprocess produced no instances')
    result = app.batcher.infer(v1.to_batch(instances, app.model), deadline)
    try:
        post = getattr(h, 'postprocess', None) or v1.default_postprocess
        predictions = post(result['outputs'], instances, ctx)
    except Exception as err:  # noqa: BLE001
        raise RuntimeFault('handler_error', 500, f'postprocess failed: {err}') from None
    if not isinstance(predictions, list):
        raise RuntimeFault('handler_error', 500, 'postprocess must return a list')
    extra = {'X-Batch-Size': str(result['batchSize']), 'X-Batch-Latency-Ms': str(result['batchLatencyMs']), 'X-Queue-Ms': str(result['queueMs'])}
    return 200, {'predictions': predictions}, extra


def profile(app, body):
    """{"batch": b, "seconds": s}: closed-loop batches of b zero instances through the batcher and the
    token gate for s seconds (<= 10): the capability point, as ml-inference's /_/profile."""
    try:
        q = json.loads(body.decode() or '{}')
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise bad_input('profile body must be JSON {"batch": n, "seconds": s}') from None
    if not isinstance(q, dict):
        raise bad_input('profile body must be JSON {"batch": n, "seconds": s}')
    if not app.is_ready():
        raise not_ready('the model is still loading')
    batch, seconds = q.get('batch', 1), q.get('seconds', 1)
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= 1024:
        raise bad_input(f'batch: {batch!r} must be an integer in [1, 1024]')
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds <= 10:
        raise bad_input(f'seconds: {seconds!r} must be in (0, 10]')
    if not app.model.shapes_known:
        raise bad_input('the model\'s input shapes are unknown (declare inputs in handler.py or signature.json)')
    zeros = app.model.zeros(batch)
    lat, t_start = [], time.monotonic()
    end = t_start + seconds
    while time.monotonic() < end:
        t0 = time.monotonic()
        app.batcher.infer(zeros)
        lat.append((time.monotonic() - t0) * 1000)
    elapsed = time.monotonic() - t_start
    lat.sort()
    return {'batch': batch, 'seconds': r3(elapsed), 'batches': len(lat), 'instancesPerSec': r3(batch * len(lat) / elapsed),
            'latencyMsP50': r3(lat[len(lat) // 2]), 'latencyMsMean': r3(sum(lat) / len(lat))}
