"""The HTTP surface: GET /_/health, /_/ready, /_/stats, POST /_/profile, GET / (model description),
the Open Inference Protocol under /v2 (v2.py), and v1 inference on POST/PUT to any other path.
http.server's ThreadingHTTPServer: a thread per connection parses and waits; the batcher's one
thread runs the model (torch releases the GIL in its kernels), so health checks and parsing go on
while a batch runs, and no asyncio <-> thread bridge is needed for a blocking model call."""
import json
import socket
import socketserver
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from errors import RuntimeFault, bad_input, not_ready
from stats import r3


class App:
    """What the handlers share; main.py fills in model, batcher, handler and labels once loaded."""

    def __init__(self, cfg, stats, log):
        self.cfg, self.stats, self.log = cfg, stats, log
        self.ready = False
        self.draining = False
        self.model = self.batcher = self.handler = self.labels = None
        self.lock = threading.Lock()
        self.active = 0

    def is_ready(self):
        return self.ready and not self.draining and self.model is not None


class View:
    """The v2 module's view of the app for one request (its deadline included)."""

    def __init__(self, app, deadline):
        self.app, self._deadline = app, deadline
        self.function_name = app.cfg['function_name']
        self.version = app.cfg['model_version']

    def is_ready(self):
        return self.app.is_ready()

    def model(self):
        return self.app.model

    def batcher(self):
        return self.app.batcher

    def deadline(self):
        return self._deadline

    def count_request(self):
        self.app.stats.count('requests')


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    server_version = 'mlfaas-torch'
    app = None

    def log_message(self, *args):
        return None

    def address_string(self):
        return self.client_address[0] if isinstance(self.client_address, tuple) else 'unix'

    def do_GET(self):
        self._handle()

    do_POST = do_PUT = do_HEAD = do_DELETE = do_PATCH = do_OPTIONS = do_GET

    def _handle(self):
        app = self.app
        started = time.monotonic()
        with app.lock:
            app.active += 1
        path = urlsplit(self.path).path
        is_v2 = path == '/v2' or path.startswith('/v2/')
        try:
            body = self._read_body(started)
            cfg = app.cfg
            deadlines = [t for t in (started + cfg['write_timeout_ms'] / 1000 if cfg['write_timeout_ms'] else None,
                                     time.monotonic() + cfg['exec_timeout_ms'] / 1000 if cfg['exec_timeout_ms'] else None) if t]
            deadline = min(deadlines) if deadlines else None
            if is_v2:
                import v2  # noqa: PLC0415 -- with torch, after the port is announced (main.py): /_/health answers meanwhile
                status, doc, extra, tail = v2.handle(View(app, deadline), self.command, path, self.headers, lambda: body)
                self._send(status, doc, extra, tail)
            else:
                self._route(path, body, deadline)
        except RuntimeFault as f:
            if f.status >= 500:
                app.stats.count('errors')
            self._send(f.status, {'error': f.message} if is_v2 else {'error': {'code': f.code, 'message': f.message}})
        except Exception as err:  # noqa: BLE001 -- a bug answers 500, never a dropped connection
            app.stats.count('errors')
            app.log(f'internal error: {type(err).__name__}: {err}')
            msg = f'{type(err).__name__}: {err}'
            self._send(500, {'error': msg} if is_v2 else {'error': {'code': 'internal', 'message': msg}})
        finally:
            with app.lock:
                app.active -= 1

    def _read_body(self, started):
        limit = self.app.cfg['max_body_bytes']
        read_ms = self.app.cfg['read_timeout_ms']
        if self.headers.get('Transfer-Encoding', '').lower() == 'chunked':
            raise RuntimeFault('length_required', 411, 'chunked request bodies are not accepted; send Content-Length')
        raw = self.headers.get('Content-Length')
        if raw is None:
            return b''
        if not raw.strip().isdigit():
            self.close_connection = True
            raise bad_input(f'Content-Length: {raw!r} is not a number')
        n = int(raw)
        if n > limit:
            self.close_connection = True
            raise RuntimeFault('payload_too_large', 413, f'request body exceeds {limit} bytes (MAX_BODY_BYTES)')
        chunks, got = [], 0
        try:
            while got < n:
                if read_ms:
                    left = started + read_ms / 1000 - time.monotonic()
                    if left <= 0:
                        raise socket.timeout()
                    self.connection.settimeout(left)
                c = self.rfile.read1(min(n - got, 1 << 16)) if hasattr(self.rfile, 'read1') else self.rfile.read(min(n - got, 1 << 16))
                if not c:
                    self.close_connection = True
                    raise bad_input(f'the body ended after {got} of {n} bytes (Content-Length)')
                chunks.append(c)
                got += len(c)
        except socket.timeout:
            self.close_connection = True
            raise RuntimeFault('read_timeout', 408, f'the request body did not arrive within read_timeout ({read_ms:g} ms)') from None
        finally:
            if read_ms:
                self.connection.settimeout(self.timeout)
        return decode_body(b''.join(chunks), self.headers.get('Content-Encoding', ''), limit)

    def _route(self, path, body, deadline):
        app = self.app
        if path == '/_/health':
            return self._send(200, {'status': 'ok'})
        if path == '/_/ready':
            if app.is_ready():
                return self._send(200, {'status': 'ready'})
            return self._send(503, {'status': 'draining' if app.draining else 'loading'})
        if path == '/_/stats':
            b = app.batcher
            doc = app.stats.snapshot(b.queue_length if b else 0, b.in_flight if b else 0)
            gate = b.gate.stats() if b else {'enabled': False}
            return self._send(200, {**doc, 'ready': app.ready, 'draining': app.draining, 'tokenGate': gate})
        if path == '/_/profile' and self.command == 'POST':
            return self._send(200, profile(app, body))
        if self.command in ('GET', 'HEAD'):
            return self._send(200, describe(app))
        if self.command not in ('POST', 'PUT'):
            raise RuntimeFault('method_not_allowed', 405, f'{self.command} is not served; POST a request body')
        status, doc, extra = infer_v1(app, body, self.headers, deadline)
        self._send(status, doc, extra)

    def _send(self, status, doc, extra=None, tail=None):
        text = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json' if tail is None else 'application/octet-stream')
        if tail is not None:
            self.send_header('Inference-Header-Content-Length', str(len(text)))
        self.send_header('Content-Length', str(len(text) + (len(tail) if tail else 0)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if self.app.draining or self.close_connection:
            self.send_header('Connection', 'close')
            self.close_connection = True
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(text + (tail or b''))


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


class UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        conn, _ = super().get_request()
        return conn, ('unix', 0)


def make_servers(app):
    cfg = app.cfg
    handler = type('BoundHandler', (Handler,), {'app': app, 'timeout': (cfg['read_timeout_ms'] / 1000) or None})
    ThreadingHTTPServer.daemon_threads = True
    tcp = ThreadingHTTPServer((cfg['host'], cfg['port']), handler)
    servers = [tcp]
    if cfg['socket_path']:
        import os
        try:
            os.unlink(cfg['socket_path'])
        except FileNotFoundError:
            pass
        servers.append(UnixHTTPServer(cfg['socket_path'], handler))
    return servers
