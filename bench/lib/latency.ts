import { Agent, request } from 'node:http';

/**
 * Sequential requests on one keep-alive connection; returns latencies in ms (hrtime precision).
 * With `socketPath`, the connection goes to that unix socket (`url` gives the path).
 */
export async function sequentialLatencies(url: string, body: string, n: number, socketPath?: string): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const u = new URL(url);
  const out: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      const status = await new Promise<number>((resolve, reject) => {
        const r = request(
          { ...(socketPath ? { socketPath } : { host: u.hostname, port: u.port }), path: u.pathname, method: 'POST', agent,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        r.on('error', reject);
        r.end(body);
      });
      if (status !== 200) throw new Error(`${url}: status ${status}`);
      out.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  } finally {
    agent.destroy();
  }
  return out;
}

export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}
