// Baseline for bench:gateway: the least a Node.js reverse proxy can do — read the body, forward
// it over a keep-alive unix socket to one replica, pipe the answer back. No queue, no metrics,
// no balancing. Usage: node minimal-proxy.js PORT SOCKET_PATH
'use strict';
const http = require('http');
const [port, socketPath] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
http
  .createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = { ...req.headers, 'content-length': String(body.length) };
      const up = http.request({ socketPath, agent, method: req.method, path: '/', headers }, (u) => {
        res.writeHead(u.statusCode, u.headers);
        u.pipe(res);
      });
      up.on('error', () => res.writeHead(502).end());
      up.end(body);
    });
  })
  .listen(Number(port), '127.0.0.1', () => process.stdout.write('listening\n'));
