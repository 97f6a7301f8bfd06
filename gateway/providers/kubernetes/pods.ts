/**
 * A function's pods as the gateway's replica table (`ReplicaInfo`). Pure.
 *
 * The autoscaler's per-replica settings live on the pod as annotations, so every gateway and the
 * node agent on the pod's node see them through their watches: `mlfaas.io/quota` (time quota in
 * (0, 1]; the node agent enforces it) and `mlfaas.io/weight` (load-balancer weight).
 */
import type { ReplicaInfo, ReplicaState } from '../../registry/registry';
import { cpuCores } from '../../../node-runtime/cpu-values';
import { CPU_BASE_ANNOTATION, SM_PERCENT_ANNOTATION, WATCHDOG_PORT } from './manifests';

export const QUOTA_ANNOTATION = 'mlfaas.io/quota';
export const WEIGHT_ANNOTATION = 'mlfaas.io/weight';

export interface PodLike {
  metadata?: { name?: string; creationTimestamp?: string | Date; annotations?: Record<string, string>; deletionTimestamp?: string | Date };
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    podIP?: string;
    startTime?: string | Date;
    conditions?: Array<{ type: string; status: string }>;
    containerStatuses?: Array<{ restartCount?: number;
      state?: { waiting?: { reason?: string; message?: string }; terminated?: { reason?: string; exitCode?: number } };
      lastState?: { terminated?: { reason?: string; exitCode?: number } }; }>;
  };
}

const iso = (t: string | Date | undefined) => (t instanceof Date ? t.toISOString() : (t ?? new Date(0).toISOString()));

export function stateOf(p: PodLike): ReplicaState {
  if (p.metadata?.deletionTimestamp) return 'draining';
  const phase = p.status?.phase;
  if (phase === 'Failed') return 'crashed';
  const waiting = p.status?.containerStatuses?.[0]?.state?.waiting?.reason;
  if (waiting && /CrashLoopBackOff|ErrImagePull|ImagePullBackOff|CreateContainerError|InvalidImageName/.test(waiting)) return 'crashed';
  const ready = p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  return phase === 'Running' && ready && p.status?.podIP ? 'ready' : 'starting';
}

function lastError(p: PodLike): string | undefined {
  const cs = p.status?.containerStatuses?.[0];
  const w = cs?.state?.waiting;
  if (w?.reason && w.reason !== 'ContainerCreating') return `${w.reason}${w.message ? `: ${w.message}` : ''}`;
  const t = cs?.lastState?.terminated ?? cs?.state?.terminated;
  if (t) return `${t.reason ?? 'Terminated'} (exit ${t.exitCode ?? '?'})`;
  const unsched = (p.status?.conditions as Array<{ type: string; status: string; message?: string }> | undefined)?.find((c) =>
    c.type === 'PodScheduled' && c.status === 'False');
  return unsched?.message;
}

export function replicaOf(p: PodLike): ReplicaInfo {
  const a = p.metadata?.annotations ?? {};
  const num = (v: string | undefined, d: number) => (v !== undefined && Number.isFinite(Number(v)) && Number(v) > 0 ? Number(v) : d);
  const r: ReplicaInfo = {
    id: p.metadata!.name!,
    url: `http://${p.status?.podIP ?? '0.0.0.0'}:${WATCHDOG_PORT}`,
    state: stateOf(p),
    agent: p.spec?.nodeName ?? '',
    startedAt: iso(p.status?.startTime ?? p.metadata?.creationTimestamp),
    restarts: p.status?.containerStatuses?.[0]?.restartCount ?? 0,
    weight: num(a[WEIGHT_ANNOTATION], 1),
    quota: Math.min(1, num(a[QUOTA_ANNOTATION], 1)),
  };
  // the cores its quota is a fraction of: the pod's declared CPU, which setQuota's requests/limits multiply by (pod-ops.ts)
  const base = a[CPU_BASE_ANNOTATION] ? cpuCores(a[CPU_BASE_ANNOTATION]) : NaN;
  if (base > 0) r.cores = base;
  // a fractional-GPU pod's container starts at this percentage (the node agent restarts one at another)
  if (a[SM_PERCENT_ANNOTATION] !== undefined) r.smShare = Math.min(100, num(a[SM_PERCENT_ANNOTATION], 100)) / 100;
  const err = r.state === 'ready' ? undefined : lastError(p);
  if (err) r.lastError = err;
  return r;
}
