"""Counters and a window of recent batch latencies for GET /_/stats and the report line
(the same fields as ml-inference's stats.js)."""
import math
import threading

WINDOW = 1024


def r3(x):
    return round(x * 1000) / 1000


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = 0
        self.instances = 0
        self.batches = 0
        self.errors = 0
        self.timeouts = 0  # 504s: exec_timeout / write_timeout passed (not in errors)
        self.last_batch_size = 0
        self.latencies = []
        self.next = 0

    def count(self, field):
        with self.lock:
            setattr(self, field, getattr(self, field) + 1)

    def record_batch(self, size, latency_ms):
        with self.lock:
            self.batches += 1
            self.instances += size
            self.last_batch_size = size
            if len(self.latencies) < WINDOW:
                self.latencies.append(latency_ms)
            else:
                self.latencies[self.next] = latency_ms
            self.next = (self.next + 1) % WINDOW

    def quantile(self, q):
        with self.lock:
            if not self.latencies:
                return None
            s = sorted(self.latencies)
        i = min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))
        return r3(s[i])

    def snapshot(self, queue_length, in_flight):
        return {
            'requests': self.requests, 'instances': self.instances, 'batches': self.batches, 'errors': self.errors, 'timeouts': self.timeouts,
            'meanBatchSize': r3(self.instances / self.batches) if self.batches else 0,
            'lastBatchSize': self.last_batch_size,
            'batchLatencyMs': {'p50': self.quantile(0.5), 'p99': self.quantile(0.99), 'window': len(self.latencies)},
            'queueLength': queue_length, 'inFlightBatch': in_flight,
        }


class LatencyEstimator:
    """Per batch size, a moving average of batch latency (alpha 0.2): the token request for the next batch."""

    def __init__(self, alpha=0.2):
        self.alpha = alpha
        self.by_size = {}

    def observe(self, size, ms):
        prev = self.by_size.get(size)
        self.by_size[size] = ms if prev is None else prev + self.alpha * (ms - prev)

    def estimate(self, size):
        if size in self.by_size:
            return self.by_size[size]
        if not self.by_size:
            return 0.0
        best = min(self.by_size, key=lambda s: abs(s - size))
        return self.by_size[best] * size / best
