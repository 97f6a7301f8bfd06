// The dashboard hub at shutdown (issue 26): close() ends every open stream and stops polling; a
// stream asked for afterwards (a keep-alive connection of a browser) gets a 503 JSON, not a stream
// that would hold the server open.
import { EventEmitter } from 'node:events';
import { UiStreamHub } from '../../gateway/routes/ui-stream';

function fake() {
  const res = Object.assign(new EventEmitter(), {
    code: 0, headers: {} as Record<string, string>, body: undefined as unknown, writableLength: 0, writableEnded: false, destroyed: false,
    chunks: [] as string[],
    status(c: number) { res.code = c; return res; },
    set(h: Record<string, string>) { Object.assign(res.headers, h); return res; },
    json(b: unknown) { res.body = b; res.writableEnded = true; return res; },
    flushHeaders() {},
    write(c: string) { res.chunks.push(c); return true; },
    end() { res.writableEnded = true; },
  });
  return { req: new EventEmitter(), res };
}

it('close() ends open streams; a later stream is a 503 naming the shutdown', async () => {
  let reads = 0;
  const h = new UiStreamHub({ overview: async () => { reads++; return { functions: [] }; }, scalingEvents: async () => [] }, { intervalMs: 10000 });
  const a = fake();
  h.handle(a.req as never, a.res as never);
  expect(h.size).toBe(1);
  h.close();
  expect(a.res.writableEnded).toBe(true);
  expect(h.size).toBe(0);
  const b = fake();
  h.handle(b.req as never, b.res as never);
  expect(b.res.code).toBe(503);
  expect(b.res.headers['Retry-After']).toBe('2');
  expect(b.res.body).toMatchObject({ error: { code: 'unavailable', message: expect.stringMatching(/shutting down/) } });
  expect(h.size).toBe(0);
  const before = reads;
  await h.tick(); // nothing to poll for
  expect(reads).toBe(before);
});
