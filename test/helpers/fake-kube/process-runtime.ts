/**
 * A kubelet's container runtime for the fake cluster: runs a pod's image from the local image
 * store as a real child process, bound to the pod's own loopback IP (127.0.100.N, every 127/8
 * address is local on Linux) at the container's port, with the pod's env (values and the
 * `metadata.name` field reference) and its projected secrets written to a private folder.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ImageStore } from '../../../gateway/providers/local/image-store';
import type { PodRuntime } from './cluster';
import type { FakeKube } from './server';

let nextIp = 2;

type Env = { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } };

export function processRuntime(kube: FakeKube, images: ImageStore): PodRuntime {
  return async (pod, log) => {
    const c = (pod.spec!.containers as Array<{ image: string; env?: Env[]; ports?: Array<{ containerPort: number }>; volumeMounts?: Array<{ name: string; mountPath: string }> }>)[0];
    const m = images.find(c.image);
    if (!m?.dir || !m.fprocess) throw new Error(`ErrImagePull: ${c.image} not found`);
    const podIP = `127.0.100.${nextIp++ % 250}`;
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: tmpdir() };
    for (const e of c.env ?? []) {
      if (e.value !== undefined) env[e.name] = e.value;
      else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = pod.metadata.name!;
    }
    env.HOST = podIP;
    env.PORT = String(c.ports?.[0]?.containerPort ?? 8080);
    const secrets = mkdtempSync(join(tmpdir(), 'fake-kubelet-secrets-'));
    for (const v of (pod.spec!.volumes ?? []) as Array<{ projected?: { sources: Array<{ secret?: { name: string } }> } }>) {
      for (const s of v.projected?.sources ?? []) {
        const sec = s.secret && kube.store.get('v1/secrets', pod.metadata.namespace, s.secret.name);
        for (const [k, b64] of Object.entries((sec?.data ?? {}) as Record<string, string>)) writeFileSync(join(secrets, k), Buffer.from(b64, 'base64'));
      }
    }
    env.MLFAAS_SECRETS_DIR = secrets; // where the kubelet would have mounted /var/openfaas/secrets
    const [cmd, ...args] = m.fprocess.split(' ');
    const child = spawn(cmd === 'node' ? process.execPath : cmd, args, { cwd: m.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    createInterface({ input: child.stdout! }).on('line', log);
    createInterface({ input: child.stderr! }).on('line', log);
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const grace = Number(pod.spec!.terminationGracePeriodSeconds ?? 30) * 1000;
    return {
      podIP,
      async stop() {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), Math.min(grace, 5000));
        await exited;
        clearTimeout(t);
        rmSync(secrets, { recursive: true, force: true });
      },
    };
  };
}
