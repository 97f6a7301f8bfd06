/**
 * `mlfaas top [-g URL] [--once] [--interval 1s]`: the gateway's `/system/overview` as a table,
 * redrawn every interval (ANSI clear + home) on a terminal; one plain frame with `--once` or when
 * stdout is not a terminal. Gateway and credentials as `mlfaas jobs` finds them (gateway-target.ts).
 */
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../gateway/config';
import { GoDurationError, parseGoDurationMs } from '../gateway/lib/go-duration';
import type { Overview } from '../gateway/routes/overview-model';
import { authHeaders, GatewayTarget, readGatewayTargetInputs, resolveGatewayTarget, unreachableMessage } from './gateway-target';
import { render } from './top-render';

export const TOP_USAGE = `Usage:
  mlfaas top [-g URL] [--once] [--interval 1s] [--username U --password P]
                        functions (ready/desired, replicas' quota and SM share, rps, p50/p99 vs SLO,
                        queue) and training jobs, redrawn every interval; one frame with --once or
                        when stdout is not a terminal. Gateway and credentials: see mlfaas jobs --help
  -h, --help            this help`;

/** ANSI: cursor home, clear the screen. */
export const CLEAR = '\x1b[H\x1b[2J';
const MIN_INTERVAL_MS = 100;
const MAX_INTERVAL_MS = 3_600_000;
const FETCH_TIMEOUT_MS = 10_000;

/** `--interval`: a Go duration (`1s`, `500ms`) or plain seconds, 100ms..1h. Throws a message naming the flag. */
export function parseInterval(raw: string | undefined): number {
  if (raw === undefined) return 1000;
  let ms: number;
  try {
    ms = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) * 1000 : parseGoDurationMs(raw);
  } catch (e) {
    if (e instanceof GoDurationError) throw new Error(`--interval: "${raw}" is not a duration (e.g. 1s, 500ms)`);
    throw e;
  }
  if (!(ms >= MIN_INTERVAL_MS && ms <= MAX_INTERVAL_MS)) throw new Error(`--interval: "${raw}" must be from 100ms to 1h`);
  return ms;
}

/** One snapshot; a non-200 answer is an Error with the gateway's message (401: where the credentials came from). */
export async function fetchOverview(target: GatewayTarget): Promise<Overview> {
  const res = await fetch(`${target.url}/system/overview`, { headers: authHeaders(target), signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  if (res.status !== 200) {
    const text = (await res.text()).slice(0, 500);
    const hint = res.status !== 401 ? '' :
      target.credentials ? `\ncredentials (from ${target.credentials.from}) refused` : '\nno credentials: see mlfaas jobs --help';
    throw new Error(`${target.url}/system/overview answered ${res.status}: ${text}${hint}`);
  }
  return (await res.json()) as Overview;
}

const failure = (target: GatewayTarget, e: unknown): string => {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  if (err.message === 'fetch failed' || err.cause?.code) return unreachableMessage(target, err.cause?.code ?? err.cause?.message ?? err.message);
  return err.message;
};

export async function topCommand(args: string[], out: NodeJS.WriteStream = process.stdout): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args,
      options: {
        gateway: { type: 'string', short: 'g' },
        once: { type: 'boolean' },
        interval: { type: 'string' },
        username: { type: 'string' },
        password: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${TOP_USAGE}\n`);
    return 2;
  }
  if (values.help) {
    console.log(TOP_USAGE);
    return 0;
  }
  let intervalMs: number;
  try {
    intervalMs = parseInterval(values.interval);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    return 2;
  }
  const dataDir = resolve(process.env.MLFAAS_DATA_DIR ?? join(REPO_ROOT, '.mlfaas'));
  const target = resolveGatewayTarget(readGatewayTargetInputs(
    { gateway: values.gateway, username: values.username, password: values.password }, process.env, dataDir));
  const live = !values.once && out.isTTY === true;
  if (!live) {
    try {
      out.write(render(await fetchOverview(target), out.columns || 160));
      return 0;
    } catch (e) {
      process.stderr.write(`${failure(target, e)}\n`);
      return 1;
    }
  }
  // live: redraw until Ctrl-C
  const stop = new AbortController();
  process.once('SIGINT', () => {
    stop.abort();
    out.write('\n');
    process.exit(0);
  });
  await liveLoop(target, intervalMs, out, stop.signal);
  return 0;
}

/** Redraws (ANSI clear + home, then a frame) every `intervalMs` until `signal` aborts; a failed fetch shows its reason and the loop keeps trying. */
export async function liveLoop(
  target: GatewayTarget, intervalMs: number, out: Pick<NodeJS.WriteStream, 'write' | 'columns'>, signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    const started = Date.now();
    let frame: string;
    try {
      frame = render(await fetchOverview(target), out.columns || 120);
    } catch (e) {
      frame = `mlfaas top: ${failure(target, e)}\n(retrying every ${intervalMs} ms; Ctrl-C quits)\n`;
    }
    if (signal.aborted) return;
    out.write(CLEAR + frame);
    await new Promise<void>((r) => {
      const t = setTimeout(r, Math.max(intervalMs - (Date.now() - started), 0));
      signal.addEventListener('abort', () => {
        clearTimeout(t);
        r();
      }, { once: true });
    });
  }
}
