import { Router } from 'express';
import { invalid, notFound } from '../errors';
import { parseJobRequest } from '../jobs/job-request';
import { JobEvent, TERMINAL } from '../jobs/job-record';
import { STREAM_ID } from '../lib/follow-stream';
import type { JobService } from '../jobs/job-service';

const ID = /^[0-9a-f-]{36}$/;

function jobId(raw: string): string {
  if (!ID.test(raw)) throw invalid('id', `"${raw}" is not a job id`);
  return raw;
}

/** `/system/jobs`: submit (201 plan | 409 earliest feasible deadline), list, get, cancel, SSE events. */
export function jobRoutes(training: JobService): Router {
  const r = Router();

  r.post('/system/jobs', async (req, res) => {
    const dry = req.query.dryRun;
    if (dry !== undefined && dry !== 'true' && dry !== 'false') throw invalid('dryRun', `"${dry}" must be true or false`);
    const out = await training.submit(parseJobRequest(req.body, training.clock.now()), dry === 'true');
    res.status(out.status).json(out.body);
  });

  r.get('/system/jobs', async (_req, res) => {
    res.json(await training.store.list());
  });

  // the admission's refusals (409s, not dry runs), newest first: `?limit=` 1..200
  r.get('/system/jobs/refusals', async (req, res) => {
    const raw = req.query.limit ?? '200';
    if (typeof raw !== 'string' || !/^\d{1,3}$/.test(raw) || +raw < 1 || +raw > 200) throw invalid('limit', `"${String(raw)}" must be an integer in [1, 200]`);
    res.json(await training.refusals.list(Number(raw)));
  });

  r.get('/system/jobs/:id', async (req, res) => {
    const rec = await training.store.get(jobId(req.params.id));
    if (!rec) throw notFound(`job ${req.params.id} not found`);
    res.json(rec);
  });

  r.delete('/system/jobs/:id', async (req, res) => {
    const rec = await training.cancel(jobId(req.params.id));
    if (!rec) throw notFound(`job ${req.params.id} not found`);
    res.json(rec);
  });

  // Server-Sent Events: every event so far (or after Last-Event-ID), then live until the job ends
  r.get('/system/jobs/:id/events', async (req, res) => {
    const ac = new AbortController();
    const end = () => ac.abort();
    training.closing.addEventListener('abort', end); // gateway shutdown: the stream ends, the server closes
    res.on('close', () => {
      ac.abort();
      training.closing.removeEventListener('abort', end);
    });
    const id = jobId(req.params.id);
    const from = (req.headers['last-event-id'] as string | undefined) ?? '0';
    if (!STREAM_ID.test(from)) throw invalid('Last-Event-ID', `"${from}" is not an event id`);
    if (!(await training.store.get(id))) throw notFound(`job ${id} not found`);
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
    res.flushHeaders();
    let idle = 0;
    for await (const batch of training.store.follow(id, from, ac.signal)) {
      for (const [eid, f] of batch) {
        const e = JSON.parse(f[1]) as JobEvent;
        res.write(`id: ${eid}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
        if (e.type === 'state' && TERMINAL.has(e.data.state as never)) ac.abort();
      }
      if (batch.length) idle = 0;
      else {
        res.write(': keep-alive\n\n');
        // a reconnect after the final event: end once the record says the job is over
        if (++idle % 5 === 0 && TERMINAL.has(((await training.store.get(id))?.state ?? 'failed') as never)) ac.abort();
      }
    }
    res.end();
  });

  return r;
}
