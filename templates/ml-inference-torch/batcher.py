"""Dynamic batching on one thread. Requests queue; when the model is idle the queue's head and the
queued requests whose non-batch dims, datatypes and input names equal its own become one batch of
at most max_batch_size rows (after an optional batch_timeout_ms wait for it to fill), concatenated
along axis 0: one token-gated forward pass per batch. A request larger than max_batch_size is
split into chunks and reassembled. A model that is not batchable runs each request alone."""
import threading
import time

import torch

from errors import RuntimeFault, bad_input
from stats import LatencyEstimator, r3


class Entry:
    __slots__ = ('inputs', 'rows', 'key', 'enqueued', 'done', 'result', 'error', 'started')

    def __init__(self, inputs, rows, key):
        self.inputs, self.rows, self.key = inputs, rows, key
        self.enqueued = time.monotonic()
        self.done = threading.Event()
        self.result = self.error = None
        self.started = False


def batch_key(inputs):
    return tuple((n, str(v.dtype), tuple(v.shape[1:])) if isinstance(v, torch.Tensor) else (n, 'list', ()) for n, v in sorted(inputs.items()))


def _rows(v):
    return v.shape[0] if isinstance(v, torch.Tensor) else len(v)


def _cat(parts):
    return torch.cat(parts, 0) if isinstance(parts[0], torch.Tensor) else [x for p in parts for x in p]


class Batcher:
    def __init__(self, model, gate, stats, max_batch_size, batch_timeout_ms, on_batch=None, log=lambda _: None):
        self.model, self.gate, self.stats, self.log = model, gate, stats, log
        self.max_batch = max_batch_size if model.batchable else 1
        self.batch_timeout = batch_timeout_ms / 1000.0
        self.on_batch = on_batch or (lambda size, ms: None)
        self.estimator = LatencyEstimator()
        self.cv = threading.Condition()
        self.queue = []
        self.running = False
        self.in_flight = 0
        self.gate_failures = 0
        self.flushing = False  # draining: no more waiting for batches to fill
        threading.Thread(target=self._loop, name='batcher', daemon=True).start()

    @property
    def queue_length(self):
        with self.cv:
            return sum(e.rows for e in self.queue)

    def infer(self, inputs, deadline=None):
        """Run a request (inputs by name, batch axis first); blocks. deadline: time.monotonic() bound,
        past it raises a 504 fault (a still-queued request is dropped from the queue)."""
        rows = {_rows(v) for v in inputs.values()}
        if len(rows) != 1:
            raise bad_input(f'inputs disagree on the batch size (axis 0): {sorted(rows)}')
        n = rows.pop()
        if n < 1:
            raise bad_input('the request has no instances (axis 0 is 0)')
        step = self.max_batch if self.model.batchable else max(1, n)  # not batchable: the request runs alone, whole
        entries = []
        with self.cv:
            for lo in range(0, n, step):
                part = {k: v[lo:lo + step] for k, v in inputs.items()}
                entries.append(Entry(part, min(step, n - lo), batch_key(part)))
            self.queue.extend(entries)
            self.cv.notify_all()
        for e in entries:
            left = None if deadline is None else deadline - time.monotonic()
            if not e.done.wait(left if left is None else max(0.0, left)):
                with self.cv:
                    for x in entries:
                        if x in self.queue:
                            self.queue.remove(x)
                raise RuntimeFault('timeout', 504, 'the request did not finish within the function\'s exec_timeout/write_timeout')
            if e.error is not None:
                raise e.error
        outs = {k: _cat([e.result['outputs'][k] for e in entries]) for k in entries[0].result['outputs']}
        return {
            'outputs': outs,
            'batchSize': max(e.result['batchSize'] for e in entries),
            'batchLatencyMs': max(e.result['batchLatencyMs'] for e in entries),
            'queueMs': max(e.result['queueMs'] for e in entries),
        }

    def idle(self, timeout):
        """Run what is queued without waiting for batches to fill, and wait until nothing is queued or
        running; False on timeout."""
        end = time.monotonic() + timeout
        with self.cv:
            self.flushing = True
            self.cv.notify_all()
            while self.queue or self.running:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self.cv.wait(min(left, 0.05))
        return True

    def _take(self):
        head = self.queue[0]
        batch, size = [], 0
        for e in list(self.queue):
            if e.key != head.key or (batch and size + e.rows > self.max_batch):
                continue
            batch.append(e)
            size += e.rows
        for e in batch:
            self.queue.remove(e)
        return batch

    def _loop(self):
        while True:
            with self.cv:
                while not self.queue:
                    self.cv.wait()
                if self.batch_timeout > 0:
                    end = time.monotonic() + self.batch_timeout
                    while not self.flushing and sum(e.rows for e in self.queue) < self.max_batch and time.monotonic() < end:
                        self.cv.wait(max(0.0, end - time.monotonic()))
                if not self.queue:
                    continue
                batch = self._take()
                self.running = True
            try:
                self._run(batch)
            except Exception as err:  # noqa: BLE001 -- every request gets an answer
                for e in batch:
                    if not e.done.is_set():
                        e.error = err
                        e.done.set()
            finally:
                with self.cv:
                    self.running = False
                    self.in_flight = 0
                    self.cv.notify_all()

    def _run(self, batch):
        size = sum(e.rows for e in batch)
        self.in_flight = size
        inputs = {k: _cat([e.inputs[k] for e in batch]) for k in batch[0].inputs}
        try:
            outputs, latency_ms, started = self._gated_run(inputs, size)
        except RuntimeFault:
            if len(batch) == 1:
                raise
            # one request's tensors may be what the model refuses: each alone, so the others get answers
            for e in batch:
                try:
                    self._run([e])
                except Exception as err:  # noqa: BLE001
                    e.error = err
                    e.done.set()
            return
        self.estimator.observe(size, latency_ms)
        self.stats.record_batch(size, latency_ms)
        self.on_batch(size, latency_ms)
        offset = 0
        for e in batch:
            mine = {}
            for k, v in outputs.items():
                mine[k] = v[offset:offset + e.rows] if _batched(v, size) else v
            offset += e.rows
            e.result = {'outputs': mine, 'batchSize': size, 'batchLatencyMs': r3(latency_ms), 'queueMs': r3((started - e.enqueued) * 1000)}
            e.done.set()

    def _gated_run(self, inputs, size):
        """acquire, one forward pass, release -> (outputs, latency ms, start time). The model refusing
        the input is a 400; running out of device memory a 503."""
        acquired = False
        try:
            self.gate.acquire(self.estimator.estimate(size))
            acquired = True
        except Exception as err:  # noqa: BLE001 -- fail open: a missing token daemon must not take the function down
            self.gate_failures += 1
            if self.gate_failures == 1 or self.gate_failures % 100 == 0:
                self.log(f'token gate acquire failed ({self.gate_failures} so far), running ungated: {err}')
        started = time.monotonic()
        try:
            return self.model.run(inputs), (time.monotonic() - started) * 1000, started
        except (RuntimeError, ValueError, TypeError, IndexError) as err:
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            if 'out of memory' in first.lower():
                raise RuntimeFault('out_of_memory', 503, f'the model ran out of memory for a batch of {size}: {first}') from None
            raise bad_input(f'the model rejected the input: {first}') from None
        finally:
            if acquired:
                try:
                    self.gate.release((time.monotonic() - started) * 1000)
                except Exception as err:  # noqa: BLE001
                    self.log(f'token gate release failed: {err}')


def _batched(v, size):
    """An output with one row per instance (split among the batch's requests), not a per-batch value."""
    if isinstance(v, torch.Tensor):
        return v.dim() > 0 and v.shape[0] == size
    return isinstance(v, list) and len(v) == size
