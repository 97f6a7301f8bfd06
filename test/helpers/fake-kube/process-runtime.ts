/**
 * A kubelet's container runtime for the fake cluster: runs a pod's image from the local image
 * store as a real child process, bound to the pod's own loopback IP (127.0.100.N, every 127/8
 * address is local on Linux) at the container's port, with the pod's env (values and the
 * `metadata.name` field reference) and its projected secrets written to a private folder. With
 * `cgroups` (cgroup v1 roots of the cpu and cpuacct hierarchies), the process runs in the pod's
 * own group as a kubelet with the cgroupfs driver makes it (`kubepods/burstable/pod<uid>`), with
 * the container's CPU limit as its CFS quota, rewritten on an in-place resize.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../../../gateway/config';
import { cpuCores } from '../../../node-runtime/cgroups';
import { CFS_PERIOD_US } from '../../../node-runtime/cpu-values';
import type { ImageStore } from '../../../gateway/providers/local/image-store';
import type { PodRuntime } from './cluster';
import type { FakeKube } from './server';

let nextIp = 2;

type Env = { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } };

export interface KubeletCgroups {
  cpu: string;
  cpuacct?: string;
}

/** The CFS quota a container's CPU limit means, as the kubelet writes it (-1: none). */
const limitUs = (resources: unknown) => {
  const cpu = (resources as { limits?: { cpu?: string } } | undefined)?.limits?.cpu;
  return cpu ? Math.round(cpuCores(cpu) * CFS_PERIOD_US) : -1;
};

/**
 * `claims`: a host folder per PersistentVolumeClaim name (the volume a claim is bound to);
 * `hostPaths`: where the test keeps a node folder a hostPath volume names. A container's env values
 * under one of its mounts are rewritten to the host folder, since the process runs without a mount
 * namespace of its own.
 */
export function processRuntime(kube: FakeKube, images: ImageStore, cgroups?: KubeletCgroups, claims: Record<string, string> = {},
  hostPaths: Record<string, string> = {}): PodRuntime {
  return async (pod, log) => {
    const c = (pod.spec!.containers as Array<{ image: string; env?: Env[]; ports?: Array<{ containerPort: number }>;
      volumeMounts?: Array<{ name: string; mountPath: string }>; }>)[0];
    const m = images.find(c.image);
    if (!m?.dir || !m.fprocess) throw new Error(`ErrImagePull: ${c.image} not found`);
    const podIP = `127.0.100.${nextIp++ % 250}`;
    // NODE_PATH: the dependencies a real image's `npm ci` installs (onnxruntime-node for ml-inference)
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: tmpdir(), NODE_PATH: join(REPO_ROOT, 'node_modules') };
    for (const e of c.env ?? []) {
      if (e.value !== undefined) env[e.name] = e.value;
      else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = pod.metadata.name!;
      else {
        // the downward API's metadata.annotations['k'], read as the container starts
        const k = /^metadata\.annotations\['(.+)'\]$/.exec(e.valueFrom?.fieldRef?.fieldPath ?? '')?.[1];
        const v = k ? (pod.metadata.annotations as Record<string, string> | undefined)?.[k] : undefined;
        if (v !== undefined) env[e.name] = v;
      }
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
    const vols = (pod.spec!.volumes ?? []) as Array<{ name: string; persistentVolumeClaim?: { claimName: string }; emptyDir?: object;
      hostPath?: { path: string }; }>;
    const scratch: string[] = [];
    for (const m of c.volumeMounts ?? []) {
      const vol = vols.find((v) => v.name === m.name);
      const claim = vol?.persistentVolumeClaim?.claimName;
      if (claim && !claims[claim]) throw new Error(`FailedMount: persistentvolumeclaim "${claim}" not bound`);
      // an emptyDir is a fresh folder of the pod's, removed with it
      const host = claim
        ? claims[claim]
        : vol?.emptyDir
          ? scratch[scratch.push(mkdtempSync(join(tmpdir(), 'fake-kubelet-emptydir-'))) - 1]
          : vol?.hostPath && hostPaths[vol.hostPath.path]; // the node's folder, as the test lays the node out
      if (!host) continue;
      for (const [k, v] of Object.entries(env)) if (v === m.mountPath || v.startsWith(`${m.mountPath}/`)) env[k] = host + v.slice(m.mountPath.length);
    }
    const [cmd, ...args] = m.fprocess.split(' ');
    const bin = cmd === 'node' ? process.execPath : cmd;
    const groups = cgroups ? [cgroups.cpu, cgroups.cpuacct].filter((r): r is string => !!r)
      .map((r) => join(r, 'kubepods', 'burstable', `pod${pod.metadata.uid}`)) : [];
    for (const g of groups) mkdirSync(g, { recursive: true });
    const cpuGroup = groups[0];
    if (cpuGroup) writeFileSync(join(cpuGroup, 'cpu.cfs_quota_us'), String(limitUs((c as { resources?: unknown }).resources)));
    // the shell joins the pod's groups, then execs the container's process: all its threads are in them
    const child = groups.length
      ? spawn('sh', ['-c', `${groups.map((g) => `echo $$ > ${g}/cgroup.procs`).join(' && ')} && exec "$0" "$@"`, bin, ...args],
          { cwd: m.dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(bin, args, { cwd: m.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    createInterface({ input: child.stdout! }).on('line', log);
    createInterface({ input: child.stderr! }).on('line', log);
    let stopping = false;
    const exitCode = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const exited = exitCode.then(() => undefined);
    const grace = Number(pod.spec!.terminationGracePeriodSeconds ?? 30) * 1000;
    return {
      podIP,
      // its own exit, not one stop() asked for
      exited: exitCode.then((code) => (stopping ? new Promise<never>(() => undefined) : code)),
      async stop() {
        stopping = true;
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), Math.min(grace, 5000));
        await exited;
        clearTimeout(t);
        rmSync(secrets, { recursive: true, force: true });
        for (const d of scratch) rmSync(d, { recursive: true, force: true });
        for (const g of groups) {
          try {
            rmdirSync(g);
          } catch {
            // busy a moment longer: the test's root group removal takes it
          }
        }
      },
      async resize(resources) {
        if (cpuGroup) writeFileSync(join(cpuGroup, 'cpu.cfs_quota_us'), String(limitUs(resources)));
      },
    };
  };
}
