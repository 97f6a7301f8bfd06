import { connect } from 'node:net';

export interface RawAnswer {
  /** Everything the server wrote before closing (or before the timeout). */
  text: string;
  /** A complete answer arrived or the server closed the connection (false: neither before the timeout). */
  done: boolean;
  status?: number;
  headers: Record<string, string>;
  /** The body, de-chunked when the answer was chunked. */
  body: string;
}

function parse(text: string, done: boolean): RawAnswer {
  const cut = text.indexOf('\r\n\r\n');
  const head = cut < 0 ? text : text.slice(0, cut);
  let body = cut < 0 ? '' : text.slice(cut + 4);
  const [line, ...rest] = head.split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(line);
  const headers: Record<string, string> = {};
  for (const h of rest) {
    const i = h.indexOf(':');
    if (i > 0) headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
  }
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    let out = '';
    for (let i = 0; ; ) {
      const eol = body.indexOf('\r\n', i);
      if (eol < 0) break;
      const n = parseInt(body.slice(i, eol), 16);
      if (!(n > 0)) break;
      out += body.slice(eol + 2, eol + 2 + n);
      i = eol + 2 + n + 2;
    }
    body = out;
  }
  return { text, done, status: m ? Number(m[1]) : undefined, headers, body };
}

/**
 * Writes `request` as-is on a fresh TCP connection and collects what comes back until the
 * server closes, a complete answer with `Content-Length`/chunked end arrives, or `timeoutMs`.
 * `halfClose` ends the client's side after writing (a client that sent less than it declared).
 */
export function rawRequest(port: number, request: string | Buffer, opts: { timeoutMs?: number; halfClose?: boolean } = {}): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    let done = false;
    const finish = (answered: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      resolve(parse(text, answered));
    };
    const timer = setTimeout(() => finish(false), opts.timeoutMs ?? 5000);
    s.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      const a = parse(text, false);
      const len = Number(a.headers['content-length']);
      if (a.status && Number.isFinite(len) && Buffer.byteLength(a.body, 'latin1') >= len) finish(true);
      if (a.status && /\r\n0\r\n\r\n$/.test(text)) finish(true);
    });
    s.on('close', () => finish(true));
    s.on('error', () => finish(true));
    s.write(request);
    if (opts.halfClose) s.end();
  });
}
