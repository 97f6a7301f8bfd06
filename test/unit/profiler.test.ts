import { monotone } from '../../autoscaler/rapp/monotone';
import { batchGrid, ProfilePoint } from '../../node-runtime/profiler';

const pt = (batch: number, quota: number, latencyMs: number): ProfilePoint => ({ batch, quota, smShare: 1, latencyMs, throughput: (batch / latencyMs) * 1000 });

describe('profiler', () => {
  test.each([
    { max: 1, want: [1] },
    { max: 8, want: [1, 2, 4, 8] },
    { max: 12, want: [1, 2, 4, 8, 12] },
  ])('batchGrid($max)', ({ max, want }) => expect(batchGrid(max)).toEqual(want));

  it('makes latency non-increasing in quota per batch size, keeping throughput consistent', () => {
    const noisy = [pt(1, 1, 10), pt(1, 0.5, 8), pt(1, 0.25, 40), pt(2, 1, 12), pt(2, 0.5, 30)];
    const m = monotone(noisy);
    const at = (b: number, q: number) => m.find((p) => p.batch === b && p.quota === q)!;
    expect(at(1, 0.5).latencyMs).toBe(10); // was faster than quota 1: noise
    expect(at(1, 0.5).throughput).toBeCloseTo(100);
    expect(at(1, 0.25).latencyMs).toBe(40);
    expect(at(2, 0.5).latencyMs).toBe(30);
    expect(noisy[1].latencyMs).toBe(8); // pure
  });
});

describe('profileReplica (end to end through the replica HTTP path)', () => {
  it('sends real JSON bodies of the model input with `batch` concurrent clients and measures requests', async () => {
    const http = await import('node:http');
    const { profileReplica } = await import('../../node-runtime/profiler');
    let inflight = 0;
    let maxInflight = 0;
    const bodies: string[] = [];
    const server = http.createServer((req, res) => {
      if (req.method === 'GET') {
        res.setHeader('content-type', 'application/json');
        return res.end(JSON.stringify({ model: { shape: ['batch', 2, 3] } }));
      }
      let b = '';
      req.on('data', (c) => (b += c));
      req.on('end', () => {
        bodies.push(b);
        inflight += 1;
        maxInflight = Math.max(maxInflight, inflight);
        setTimeout(() => {
          inflight -= 1;
          res.setHeader('content-type', 'application/json');
          res.end('{"predictions":[0]}');
        }, 20);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const quotas: number[] = [];
    let restored = false;
    try {
      const pts = await profileReplica({ url }, { batches: [1, 4], quotas: [1, 0.5], seconds: 0.5 }, async (q) => void quotas.push(q),
        async () => void (restored = true));
      expect(quotas).toEqual([1, 0.5]);
      expect(restored).toBe(true);
      expect(pts.map((p) => [p.batch, p.quota])).toEqual([[1, 1], [4, 1], [1, 0.5], [4, 0.5]]);
      expect(JSON.parse(bodies[0])).toEqual({ instances: [[0, 0, 0, 0, 0, 0]] });
      expect(maxInflight).toBe(4);
      const b1 = pts[0];
      const b4 = pts[1];
      // 20 ms per request: at most ~50/s with one client and ~200/s with four, however busy the host.
      // How much faster four clients are is a wall-clock claim: the four-at-once mechanism is maxInflight
      // above (this test is not a *.timing test; it failed at 1.67x beside a full suite and a benchmark)
      expect(b1.latencyMs).toBeGreaterThanOrEqual(19);
      expect(b1.throughput).toBeLessThan(55);
      expect(b4.latencyMs).toBeGreaterThanOrEqual(19);
      expect(b4.throughput).toBeLessThan(4 * 55);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
