/**
 * An ml-training harness run as a pod: created, its log followed from the moment its container
 * runs (the harness's JSON report lines to `onLine`, other lines to `onText`), and its exit code
 * read from the container's terminated state once the log ends. The Kubernetes side of the local
 * `spawnHarness` + `exited`, for profile runs and for training jobs' allocations alike.
 */
import { type CoreV1Api, type KubeConfig, Log, type V1Pod } from '@kubernetes/client-node';
import { Writable } from 'node:stream';
import { type HarnessLine, routeLine } from '../../../node-runtime/harness';
import type { HarnessHandle } from '../../jobs/profile-run';
import { unless } from './api-errors';

export interface PodHarness extends HarnessHandle {
  readonly name: string;
  /** Deletes the pod with `graceS` (SIGTERM, then SIGKILL after it) and resolves once it is gone. */
  kill(graceS?: number): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Lines of a byte stream, each routed as the harness's output is. */
function lineSink(onLine: (l: HarnessLine) => void, onText: (t: string) => void): Writable {
  let rest = '';
  return new Writable({
    write(chunk: Buffer, _e, cb) {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop()!;
      for (const l of lines) if (l) routeLine(l, onLine, onText);
      cb();
    },
    final(cb) {
      if (rest) routeLine(rest, onLine, onText);
      cb();
    },
  });
}

/** The exit code of a pod's first container (null: the pod is gone or never ran). */
const exitCodeOf = (p: V1Pod | undefined): number | null => {
  const t = p?.status?.containerStatuses?.[0]?.state?.terminated;
  if (t) return t.exitCode;
  return p?.status?.phase === 'Succeeded' ? 0 : p?.status?.phase === 'Failed' ? 1 : null;
};

/** Creates `pod` and follows it to its end. */
export function startPodHarness(kc: KubeConfig, core: CoreV1Api, pod: V1Pod, onLine: (l: HarnessLine) => void, onText: (t: string) => void): PodHarness {
  const name = pod.metadata!.name!;
  const namespace = pod.metadata!.namespace!;
  let killed: Promise<void> | undefined;
  const read = () => unless(core.readNamespacedPod({ name, namespace }), 404);

  const created = core.createNamespacedPod({ namespace, body: pod });
  const run = async (): Promise<number | null> => {
    await created;
    // the log is there once the container runs: until then the API answers 400 (ContainerCreating)
    for (let i = 0; !killed; i++) {
      const p = await read();
      if (!p) return null;
      const phase = p.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed' || phase === 'Running') break;
      for (const c of p.status?.containerStatuses ?? []) if (c.state?.waiting?.message)
        onText(`pod ${name}: ${c.state.waiting.reason}: ${c.state.waiting.message}`);
      await sleep(Math.min(1000, 50 * 2 ** i));
    }
    if (killed) return null;
    const sink = lineSink(onLine, onText);
    const finished = new Promise<void>((r) => sink.on('finish', () => r()));
    await new Log(kc).log(namespace, name, pod.spec!.containers[0].name, sink, { follow: true }).catch((e: Error) => {
      onText(`pod ${name}: log: ${e.message}`);
      sink.end();
    });
    await finished;
    // the log ends with the container; the phase follows the kubelet's next status update
    for (let i = 0; i < 100; i++) {
      const p = await read();
      if (!p) return null;
      const code = exitCodeOf(p);
      if (code !== null) return code;
      await sleep(100);
    }
    return null;
  };

  return {
    name,
    exited: run().catch((e: Error) => {
      onText(`pod ${name}: ${e.message}`);
      return null;
    }),
    kill(graceS = 0) {
      killed ??= (async () => {
        if (!(await created.then(() => true).catch(() => false))) return;
        await unless(core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: graceS }), 404);
        for (let i = 0; (await read()) && i < 10 * (graceS + 20); i++) await sleep(100);
      })();
      return killed;
    },
  };
}
