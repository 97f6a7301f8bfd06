/**
 * Per-pod operations of the Kubernetes provider: the CPU limit a time quota means, and a function's
 * logs read from its pods (`timestamps=true`, merged by time; `follow` streams every pod's log).
 */
import { type CoreV1Api, type KubeConfig, Log, type V1Pod } from '@kubernetes/client-node';
import { Writable } from 'node:stream';
import type { FunctionRef } from '../../lib/names';
import type { LogLine, LogQuery } from '../function-provider';
import { cpuCores } from '../../../node-runtime/cgroups';
import { CPU_BASE_ANNOTATION } from './manifests';

/** The CPU limit for `quota` of the function's declared CPU limit, or undefined without one. */
export function cpuLimitFor(pod: V1Pod, quota: number): string | undefined {
  const base = pod.metadata?.annotations?.[CPU_BASE_ANNOTATION];
  const milli = base ? cpuCores(base) * 1000 : 0;
  if (!(milli > 0)) return undefined;
  return `${Math.max(10, Math.round(milli * quota))}m`;
}

/** `2026-11-24T10:00:00.123456789Z text` → a LogLine (the API server's timestamps=true format). */
export function parseLogLine(ref: FunctionRef, pod: string, raw: string): LogLine {
  const sp = raw.indexOf(' ');
  const ts = sp > 0 ? raw.slice(0, sp) : '';
  const ok = /^\d{4}-\d\d-\d\dT/.test(ts);
  return { name: ref.name, namespace: ref.namespace, instance: pod, timestamp: ok ? ts : new Date().toISOString(), text: ok ? raw.slice(sp + 1) : raw };
}

/**
 * `onPods` (follow only): called with the function's pods whenever they change, so a replica that
 * starts during the follow is followed too (from its first line); returns an unsubscribe.
 */
export async function* podLogLines(kc: KubeConfig, core: CoreV1Api, ref: FunctionRef, pods: V1Pod[], q: LogQuery,
  onPods?: (cb: (pods: V1Pod[]) => void) => () => void): AsyncIterable<LogLine> {
  const sinceSeconds = q.since ? Math.max(1, Math.ceil((Date.now() - q.since.getTime()) / 1000)) : undefined;
  const tailLines = q.tail !== undefined && q.tail >= 0 ? q.tail : undefined;
  if (!q.follow) {
    const all: LogLine[] = [];
    for (const p of pods) {
      const text = await core.readNamespacedPodLog({ name: p.metadata!.name!, namespace: ref.namespace, timestamps: true, tailLines, sinceSeconds })
        .catch(() => '');
      for (const l of String(text).split('\n')) if (l) all.push(parseLogLine(ref, p.metadata!.name!, l));
    }
    all.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    yield* tailLines !== undefined ? all.slice(-tailLines) : all;
    return;
  }
  // follow: every pod's stream into one queue until the caller aborts
  const queue: LogLine[] = [];
  let wake: (() => void) | undefined;
  const log = new Log(kc);
  const aborts: AbortController[] = [];
  const followed = new Set<string>();
  const follow = async (p: V1Pod, fresh: boolean) => {
    const name = p.metadata!.name!;
    if (followed.has(name) || q.signal.aborted) return;
    followed.add(name);
    let rest = '';
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        const lines = (rest + chunk.toString('utf8')).split('\n');
        rest = lines.pop()!;
        for (const l of lines) if (l) queue.push(parseLogLine(ref, name, l));
        wake?.();
        done();
      },
    });
    const opts = fresh ? { follow: true, timestamps: true } : { follow: true, timestamps: true, tailLines, sinceSeconds };
    aborts.push(await log.log(ref.namespace, name, p.spec!.containers[0].name, sink, opts).catch(() => new AbortController()));
  };
  for (const p of pods) await follow(p, false);
  // a pod's log exists once its container runs: new pods are followed when they are Running
  const off = onPods?.((now) => {
    for (const p of now) if (p.status?.phase === 'Running') void follow(p, true);
  });
  const stop = () => wake?.();
  q.signal.addEventListener('abort', stop);
  try {
    while (!q.signal.aborted) {
      while (queue.length) yield queue.shift()!;
      if (q.signal.aborted) break; // aborted while the caller held a line: no wake-up will come
      await new Promise<void>((r) => (wake = r));
      wake = undefined;
    }
  } finally {
    off?.();
    q.signal.removeEventListener('abort', stop);
    for (const a of aborts) a.abort();
  }
}
