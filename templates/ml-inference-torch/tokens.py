"""Token gate for the CPU (or a GPU index): tokend's wire protocol (native/include/tokend_proto.h:
56-byte little-endian records, HELLO -> WELCOME, ACQUIRE -> GRANT, pushed REVOKE) over a unix
socket, the same accounting as templates/ml-inference/tokens.js. The batcher calls
acquire(est_ms) before a batch (blocks only when the window's budget is overdrawn) and
release(used_ms) after. tokend silent for timeout_ms while a batch waits, or unreachable: the
gate fails open (batches run ungated) and keeps reconnecting. Stdlib only."""
import socket
import struct
import threading
import time

MSG = struct.Struct('<IHHII5Q')  # magic, version, type, device, flags, a, b, c, d, reserved
MSG_SIZE = MSG.size
MAGIC = 0x444E4B54
VERSION = 1
HELLO, WELCOME, ACQUIRE, GRANT, REVOKE = 1, 2, 3, 4, 5
F_BLOCKED = 2
DEVICE_CPU = 0xFFFF
U64_MAX = (1 << 64) - 1
assert MSG_SIZE == 56


def encode(kind, device, flags, a=0, b=0, c=0, d=0):
    clamp = lambda v: max(0, min(U64_MAX, int(v)))  # noqa: E731
    return MSG.pack(MAGIC, VERSION, kind, device, flags, clamp(a), clamp(b), clamp(c), clamp(d), 0)


def decode(buf):
    magic, version, kind, device, flags, a, b, c, d, _ = MSG.unpack(buf)
    return {'magic': magic, 'version': version, 'type': kind, 'device': device, 'flags': flags, 'a': a, 'b': b, 'c': c, 'd': d}


class NoopGate:
    kind = 'none'

    def acquire(self, est_ms):
        return None

    def release(self, used_ms):
        return None

    def close(self):
        return None

    def stats(self):
        return {'enabled': False}


class TokenGate:
    kind = 'tokens'

    def __init__(self, socket_path, device=DEVICE_CPU, timeout_ms=200, reconnect_ms=100):
        self.path = socket_path
        self.device = device
        self.timeout = timeout_ms / 1000.0
        self.reconnect = reconnect_ms / 1000.0
        self.cv = threading.Condition()
        self.budget_ns = 0.0  # tokens left in this window; negative: overdraft
        self.base_ns = 0.0
        self.open = False
        self.closed = False
        self.sock = None
        self.sent_blocked = False
        self.blocked_in_window = False
        self.waiting = 0
        self.last_heard = time.monotonic()
        self.last_report = time.monotonic()
        self.batches_since_report = 0
        self.outstanding = []
        self.st = {'acquired': 0, 'waited': 0, 'waitedMs': 0.0, 'grants': 0, 'grantedMs': 0.0, 'revokes': 0,
                   'connects': 0, 'disconnects': 0, 'failOpen': 0, 'windowMs': 0.0}
        self.thread = threading.Thread(target=self._run, name='tokend-client', daemon=True)
        self.thread.start()

    # -- the socket thread: connect, read, watchdog ------------------------------------------
    def _run(self):
        while not self.closed:
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(self.path)
            except OSError:
                self._tick(connected=False)
                time.sleep(self.reconnect)
                continue
            with self.cv:
                self.sock = s
                self.st['connects'] += 1
            self._send(encode(HELLO, self.device, 0))
            self._read(s)
            with self.cv:
                self.sock = None
                self.st['disconnects'] += 1
            try:
                s.close()
            except OSError:
                pass
            if not self.closed:
                time.sleep(self.reconnect)

    def _read(self, s):
        buf = b''
        s.settimeout(max(0.002, min(0.02, self.timeout / 4)))
        while not self.closed:
            try:
                chunk = s.recv(4096)
                if not chunk:
                    return
                buf += chunk
                while len(buf) >= MSG_SIZE:
                    if not self._on_message(decode(buf[:MSG_SIZE])):
                        return
                    buf = buf[MSG_SIZE:]
            except socket.timeout:
                pass
            except OSError:
                return
            self._tick(connected=True)

    def _tick(self, connected):
        with self.cv:
            if self.waiting and connected and not self.sent_blocked:
                self.sent_blocked = self.blocked_in_window = True
                self._send_acquire(True)
            if time.monotonic() - self.last_heard > self.timeout and (self.waiting or not connected) and not self.open:
                self.open = True
                self.st['failOpen'] += 1
                self.cv.notify_all()

    def _send(self, data):
        s = self.sock
        if s is None:
            return
        try:
            s.sendall(data)
        except OSError:
            pass

    def _send_acquire(self, blocked):
        now = time.monotonic()
        used = max(0.0, self.base_ns - self.budget_ns)
        flags = F_BLOCKED if (blocked or self.blocked_in_window) else 0
        want = U64_MAX if flags else round(used * 1.25)
        n = self.batches_since_report
        klc = round((now - self.last_report) * 1e9 / n) if n else 0
        self._send(encode(ACQUIRE, self.device, flags, round(used), want, n, klc))
        self.batches_since_report = 0
        self.last_report = now

    def _on_message(self, m):
        if m['magic'] != MAGIC or m['version'] != VERSION:
            return False
        with self.cv:
            self.last_heard = time.monotonic()
            a = float(m['a'])
            if m['type'] == WELCOME:
                self.st['windowMs'] = a / 1e6
                self.base_ns = self.budget_ns
                self._send_acquire(self.waiting > 0)
            elif m['type'] == GRANT:
                self.st['grants'] += 1
                self.st['grantedMs'] += a / 1e6
                self.budget_ns = a if self.open else min(self.budget_ns, 0.0) + a
                self.base_ns = self.budget_ns
                self.open = False
                self._send_acquire(False)
                self.sent_blocked = self.blocked_in_window = False
                self.cv.notify_all()
            elif m['type'] == REVOKE:
                self.st['revokes'] += 1
                if self.budget_ns > a:
                    self.base_ns -= self.budget_ns - a
                    self.budget_ns = a
        return True

    # -- the batcher's side ------------------------------------------------------------------
    def acquire(self, est_ms):
        est = max(1000.0, est_ms * 1e6)
        with self.cv:
            self.st['acquired'] += 1
            self.batches_since_report += 1
            self.outstanding.append(est)
            if self.open:
                return
            before = self.budget_ns
            self.budget_ns -= est
            if before >= est:
                return
            self.st['waited'] += 1
            since = time.monotonic()
            self.waiting += 1
            if self.sock is not None and not self.sent_blocked:
                self.sent_blocked = self.blocked_in_window = True
                self._send_acquire(True)
            try:
                while not (self.budget_ns >= 0 or self.open or self.closed):
                    self.cv.wait(0.05)
            finally:
                self.waiting -= 1
                self.st['waitedMs'] += (time.monotonic() - since) * 1000

    def release(self, used_ms):
        with self.cv:
            est = self.outstanding.pop(0) if self.outstanding else None
            if est is None or self.open:
                return
            self.budget_ns -= max(0.0, used_ms) * 1e6 - est

    def close(self):
        with self.cv:
            self.closed = True
            self.cv.notify_all()
            if self.sock is not None:
                try:
                    self.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def stats(self):
        with self.cv:
            return {'enabled': True, 'connected': self.sock is not None, 'open': self.open, 'budgetMs': self.budget_ns / 1e6, **self.st}


def load_token_gate(socket_path, device='cpu'):
    """MLFAAS_TOKEND_SOCKET unset: ungated. device 'cpu' or a GPU index."""
    if not socket_path:
        return NoopGate()
    return TokenGate(socket_path, DEVICE_CPU if device == 'cpu' else int(device))
