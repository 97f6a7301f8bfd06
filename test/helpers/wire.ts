import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One HTTP request faas-cli sent, with what the recording mock answered. */
export interface WireRequest {
  cmd: string;
  method: string;
  path: string;
  mockStatus: number;
  headers: Record<string, string>;
  body?: string;
}

export const WIRE_FILE = join(__dirname, '../../../shared/reference/faas-cli-wire.txt');

/** Parses PART 1 of the faas-cli wire capture into requests, in order. */
export function readWire(file = WIRE_FILE): WireRequest[] {
  const text = readFileSync(file, 'utf8');
  const part1 = text.split('=================== PART 2')[0];
  const out: WireRequest[] = [];
  let cmd = '';
  let cur: WireRequest | undefined;
  for (const line of part1.split('\n')) {
    const c = /^### CMD: (.*)$/.exec(line);
    if (c) {
      cmd = c[1].trim();
      continue;
    }
    const r = /^ {2}(GET|POST|PUT|DELETE|PATCH) (\S+) {2}-> mock replied (\d{3})$/.exec(line);
    if (r) {
      cur = { cmd, method: r[1], path: r[2], mockStatus: Number(r[3]), headers: {} };
      out.push(cur);
      continue;
    }
    const b = /^ {4}BODY: (.*)$/.exec(line);
    if (b && cur) {
      cur.body = b[1];
      continue;
    }
    const h = /^ {4}([a-z0-9-]+): ?(.*)$/.exec(line);
    if (h && cur) cur.headers[h[1]] = h[2];
  }
  return out;
}
