import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImageManifest, ImageStore } from '../../gateway/providers/local/image-store';

/**
 * A real HTTP function for tests: answers with its replica id, method, path, query and body;
 * `?sleep=MS` delays the answer; `?pad=N` adds N bytes to it; `?exit=1` crashes the process;
 * `/secret/NAME` reads a mounted secret.
 */
export const ECHO_HTTP_SERVER = `
const http = require('http');
const fs = require('fs');
const path = require('path');
let inflight = 0, stopping = false;
const server = http.createServer((req, res) => {
  if (req.url === '/_/ready' || req.url === '/_/health') { res.writeHead(stopping ? 503 : 200); return res.end('ok'); }
  const u = new URL(req.url, 'http://x');
  if (u.searchParams.get('exit')) process.exit(3);
  const chunks = [];
  inflight++;
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const reply = () => {
      inflight--;
      if (u.pathname.startsWith('/secret/')) {
        const f = path.join(process.env.MLFAAS_SECRETS_DIR || '/nonexistent', u.pathname.slice(8));
        return res.writeHead(200).end(fs.existsSync(f) ? fs.readFileSync(f) : 'missing');
      }
      res.writeHead(200, { 'content-type': 'application/json', 'x-replica': process.env.MLFAAS_REPLICA_ID });
      res.end(JSON.stringify({ replica: process.env.MLFAAS_REPLICA_ID, method: req.method, path: u.pathname,
        query: u.search, body: Buffer.concat(chunks).toString(), env: process.env.GREETING || null,
        callId: req.headers['x-call-id'] || null, pad: 'x'.repeat(Number(u.searchParams.get('pad') || 0)) }));
    };
    const ms = Number(u.searchParams.get('sleep') || 0);
    ms ? setTimeout(reply, ms) : reply();
  });
});
server.listen(Number(process.env.PORT), process.env.HOST || '127.0.0.1', () => console.log('echo-http ready on ' + process.env.PORT));
process.on('SIGTERM', () => { stopping = true; server.close(); const t = setInterval(() => { if (inflight === 0) { console.log('drained'); ` +
  `process.exit(0); } }, 10); });
`;

/** Stores an image built from `files` (name → content) with the given manifest. */
export function seedImage(store: ImageStore, image: string, files: Record<string, string>,
  manifest: Omit<ImageManifest, 'dir' | 'image' | 'builtAt'>): ImageManifest {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-seed-'));
  try {
    for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
    return store.put(image, dir, manifest);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The standard test image `test/echo-http:1` (HTTP mode, readiness /_/ready). */
export function seedEchoHttp(store: ImageStore, image = 'test/echo-http:1'): ImageManifest {
  return seedImage(store, image, { 'server.js': ECHO_HTTP_SERVER }, {
    language: 'node',
    kind: 'inference',
    mode: 'http',
    fprocess: 'node server.js',
    readiness: '/_/ready',
    health: '/_/health',
  });
}
