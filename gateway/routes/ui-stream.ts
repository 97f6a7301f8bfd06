import type { Request, Response } from 'express';
import type { FunctionRef } from '../lib/names';
import { refKey } from '../lib/names';
import type { ScalingEvent } from '../registry/scaling-events';

/** What the stream needs of an overview: its function list (the rest is passed through as is). */
export interface OverviewLike {
  functions: Array<{ name: string; namespace: string }>;
}

/** A scaling event on the stream: `/system/scaling-events`'s entry plus the function it belongs to. */
export type StreamScalingEvent = ScalingEvent & { function: string; namespace: string };

export interface UiStreamSources {
  /** The overview snapshot (`GET /system/overview`'s body). */
  overview: () => Promise<OverviewLike>;
  /** Newest first, like `ScalingEvents.list`. */
  scalingEvents: (ref: FunctionRef, limit: number) => Promise<ScalingEvent[]>;
}

export interface UiStreamOptions {
  /** Overview period (the contract: 1 s). */
  intervalMs?: number;
  /** A comment line this often, so proxies and the browser keep the connection. */
  heartbeatMs?: number;
  /** Bytes a slow client may have unsent before it is dropped (it reconnects and starts afresh). */
  maxBufferedBytes?: number;
  /** Events per function kept for clients that connect later. */
  backlog?: number;
}

/**
 * The events in `latest` (newest first) that come before `lastSeen` (the newest one already
 * sent, as JSON); all of them when `lastSeen` is unknown or no longer in the window. Oldest first.
 */
export function unseenEvents(latest: readonly ScalingEvent[], lastSeen: string | undefined): ScalingEvent[] {
  const keys = latest.map((e) => JSON.stringify(e));
  const i = lastSeen === undefined ? -1 : keys.indexOf(lastSeen);
  return latest.slice(0, i < 0 ? latest.length : i).reverse();
}

/** One SSE frame. `data` lines cannot hold a newline: JSON.stringify never writes one. */
export const sseFrame = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

interface Client {
  res: Response;
  maxBuffered: number;
}

/**
 * One poller for all connected dashboards: every `intervalMs` it builds the overview once and
 * reads each function's newest scaling events once, then writes them to every client. It runs only
 * while a client is connected.
 */
export class UiStreamHub {
  private readonly clients = new Set<Client>();
  private timer?: NodeJS.Timeout;
  private heartbeat?: NodeJS.Timeout;
  private busy = false;
  private closed = false;
  private lastSeen = new Map<string, string>();
  private backlog = new Map<string, StreamScalingEvent[]>();
  private readonly o: Required<UiStreamOptions>;

  constructor(private readonly src: UiStreamSources, opts: UiStreamOptions = {}) {
    this.o = { intervalMs: 1000, heartbeatMs: 15000, maxBufferedBytes: 1 << 20, backlog: 20, ...opts };
  }

  get size(): number {
    return this.clients.size;
  }

  /** Express handler for `GET /ui/api/stream`. */
  handle = (req: Request, res: Response): void => {
    if (this.closed) {
      // shutting down: a keep-alive connection's new stream would hold the server open
      res.status(503).set({ 'Retry-After': '2', Connection: 'close' })
        .json({ error: { code: 'unavailable', message: 'the gateway is shutting down; reconnect shortly' } });
      return;
    }
    res.status(200).set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    res.write('retry: 2000\n\n');
    const c: Client = { res, maxBuffered: this.o.maxBufferedBytes };
    for (const list of this.backlog.values()) for (const e of list) this.send(c, 'scaling', e);
    this.clients.add(c);
    const drop = () => this.remove(c);
    req.on('close', drop);
    res.on('close', drop);
    res.on('error', drop);
    if (!this.timer) this.start();
    else void this.tick();
  };

  /** Ends every client and stops polling; later connections get a 503 (gateway shutdown, tests). */
  close(): void {
    this.closed = true;
    for (const c of [...this.clients]) {
      c.res.end();
      this.remove(c);
    }
  }

  private start() {
    this.timer = setInterval(() => void this.tick(), this.o.intervalMs);
    this.heartbeat = setInterval(() => {
      for (const c of [...this.clients]) this.write(c, ': heartbeat\n\n');
    }, this.o.heartbeatMs);
    this.timer.unref();
    this.heartbeat.unref();
    void this.tick();
  }

  private remove(c: Client) {
    if (!this.clients.delete(c)) return;
    if (!c.res.writableEnded) c.res.end();
    if (this.clients.size === 0) {
      clearInterval(this.timer);
      clearInterval(this.heartbeat);
      this.timer = undefined;
      this.heartbeat = undefined;
      this.lastSeen.clear();
      this.backlog.clear();
    }
  }

  private send(c: Client, event: string, data: unknown) {
    this.write(c, sseFrame(event, data));
  }

  /** A client whose unsent bytes pass the bound is dropped, not buffered without end. */
  private write(c: Client, chunk: string) {
    if (c.res.writableEnded || c.res.destroyed) return this.remove(c);
    if (c.res.writableLength > c.maxBuffered) return this.remove(c);
    c.res.write(chunk);
  }

  private broadcast(event: string, data: unknown) {
    for (const c of [...this.clients]) this.send(c, event, data);
  }

  /** One round; a round still running (a slow store) makes the next one skip, not pile up. */
  async tick(): Promise<void> {
    if (this.busy || this.clients.size === 0) return;
    this.busy = true;
    try {
      let ov: OverviewLike;
      try {
        ov = await this.src.overview();
      } catch (e) {
        this.broadcast('error', { message: `overview unavailable: ${(e as Error).message}` });
        return;
      }
      this.broadcast('overview', ov);
      const present = new Set<string>();
      for (const f of ov.functions) {
        const key = refKey(f);
        present.add(key);
        const latest = await this.src.scalingEvents({ name: f.name, namespace: f.namespace }, this.o.backlog).catch(() => undefined);
        if (!latest?.length) continue;
        const fresh = unseenEvents(latest, this.lastSeen.get(key));
        this.lastSeen.set(key, JSON.stringify(latest[0]));
        const kept = this.backlog.get(key) ?? [];
        for (const e of fresh) {
          const se: StreamScalingEvent = { ...e, function: f.name, namespace: f.namespace };
          kept.push(se);
          this.broadcast('scaling', se);
        }
        this.backlog.set(key, kept.slice(-this.o.backlog));
      }
      for (const key of [...this.lastSeen.keys()]) {
        if (!present.has(key)) {
          this.lastSeen.delete(key);
          this.backlog.delete(key);
        }
      }
    } finally {
      this.busy = false;
    }
  }
}
