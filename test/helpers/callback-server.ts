import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';

export interface Callback {
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * An HTTP server on 127.0.0.1 that records every POST it receives (the X-Callback-Url target),
 * and counts the TCP connections it accepted (a trap: a callback that must never arrive).
 */
export async function callbackServer(status = 200): Promise<{ url: string; port: number; received: Callback[]; connections(): number;
  close(): Promise<void>; }> {
  const received: Callback[] = [];
  let connections = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(status).end();
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/cb`,
    port,
    received,
    connections: () => connections,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
