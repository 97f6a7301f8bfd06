"""The HTTP plumbing: routes GET /_/health, /_/ready, /_/stats, POST /_/profile, GET / and v1 inference
on POST/PUT to any other path (endpoints.py), the Open Inference Protocol under /v2 (v2.py); bodies
by Content-Length or chunked, within read_timeout; deadlines from write_timeout / exec_timeout.
http.server's ThreadingHTTPServer: a thread per connection parses and waits; the batcher's one
thread runs the model (torch releases the GIL in its kernels), so health checks and parsing go on
while a batch runs, and no asyncio <-> thread bridge is needed for a blocking model call."""
import json
import socket
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import endpoints
from config import ConfigError, go_duration_ms
from errors import RuntimeFault, bad_input


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

    def not_ready_why(self):
        return 'the function is shutting down' if self.app.draining else 'the model is still loading'

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
            exec_ms = request_exec_ms(cfg['exec_timeout_ms'], self.headers.get('X-Timeout'))
            deadlines = [t for t in (started + cfg['write_timeout_ms'] / 1000 if cfg['write_timeout_ms'] else None,
                                     time.monotonic() + exec_ms / 1000 if exec_ms else None) if t]
            deadline = min(deadlines) if deadlines else None
            if is_v2:
                import v2  # noqa: PLC0415 -- with torch, after the port is announced (main.py): /_/health answers meanwhile
                status, doc, extra, tail = v2.handle(View(app, deadline), self.command, path, self.headers, lambda: body)
                self._send(status, doc, extra, tail)
            else:
                self._route(path, body, deadline)
        except RuntimeFault as f:
            if f.code == 'timeout':
                app.stats.count('timeouts')
            elif f.status >= 500:
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
        """The body (Content-Length or chunked), within read_timeout of the request's start (else 408)
        and MAX_BODY_BYTES (else 413), inflated per Content-Encoding."""
        limit = self.app.cfg['max_body_bytes']
        read_ms = self.app.cfg['read_timeout_ms']
        chunked = 'chunked' in self.headers.get('Transfer-Encoding', '').lower()
        raw = self.headers.get('Content-Length')
        if raw is None and not chunked:
            return b''
        if not chunked and not raw.strip().isdigit():
            self.close_connection = True
            raise bad_input(f'Content-Length: {raw!r} is not a number')
        try:
            body = self._read_chunked(started, read_ms, limit) if chunked else self._read_exactly(int(raw), started, read_ms, limit)
        except socket.timeout:
            self.close_connection = True
            raise RuntimeFault('read_timeout', 408, f'the request body did not arrive within read_timeout ({read_ms:g} ms)') from None
        finally:
            if read_ms:
                self.connection.settimeout(self.timeout)
        return endpoints.decode_body(body, self.headers.get('Content-Encoding', ''), limit)

    def _deadline(self, started, read_ms):
        if read_ms:
            left = started + read_ms / 1000 - time.monotonic()
            if left <= 0:
                raise socket.timeout()
            self.connection.settimeout(left)

    def _read_exactly(self, n, started, read_ms, limit):
        if n > limit:
            self.close_connection = True
            raise RuntimeFault('payload_too_large', 413, f'request body exceeds {limit} bytes (MAX_BODY_BYTES)')
        chunks, got = [], 0
        while got < n:
            self._deadline(started, read_ms)
            c = self.rfile.read1(min(n - got, 1 << 16))
            if not c:
                self.close_connection = True
                raise bad_input(f'the body ended after {got} of {n} bytes (Content-Length)')
            chunks.append(c)
            got += len(c)
        return b''.join(chunks)

    def _read_chunked(self, started, read_ms, limit):
        chunks, got = [], 0
        while True:
            self._deadline(started, read_ms)
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b';')[0].strip(), 16)
            except ValueError:
                self.close_connection = True
                raise bad_input(f'Transfer-Encoding: chunked: bad chunk size line {line[:40]!r}') from None
            if size == 0:
                while self.rfile.readline(1024) not in (b'\r\n', b'\n', b''):
                    self._deadline(started, read_ms)  # trailers
                return b''.join(chunks)
            got += size
            if got > limit:
                self.close_connection = True
                raise RuntimeFault('payload_too_large', 413, f'request body exceeds {limit} bytes (MAX_BODY_BYTES)')
            chunks.append(self._read_exactly(size, started, read_ms, limit))
            self.rfile.readline(16)  # the CRLF after the chunk

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
            return self._send(200, endpoints.profile(app, body))
        if self.command in ('GET', 'HEAD'):
            return self._send(200, endpoints.describe(app))
        if self.command not in ('POST', 'PUT'):
            raise RuntimeFault('method_not_allowed', 405, f'{self.command} is not served; POST a request body')
        status, doc, extra = endpoints.infer_v1(app, body, self.headers, deadline)
        self._send(status, doc, extra)

    def _send(self, status, doc, extra=None, tail=None):
        try:
            self._write(status, doc, extra, tail)
        except OSError:  # the client went away: nothing to answer
            self.close_connection = True

    def _write(self, status, doc, extra, tail):
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


def request_exec_ms(exec_ms, header):
    """A request's X-Timeout (a Go duration) shortens exec_timeout for it, as in of-watchdog; a longer or
    malformed one is ignored."""
    if not header or not exec_ms:
        return exec_ms
    try:
        ms = go_duration_ms('X-Timeout', header)
    except ConfigError:
        return exec_ms
    return ms if ms and 0 < ms <= exec_ms else exec_ms


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
