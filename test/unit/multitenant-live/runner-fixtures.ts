/**
 * What the fixed-cluster runner's unit tests share: a recording provider with the local provider's
 * semantics (setQuota checks and stores quota and limit; endpoints report them back) and a
 * controller that always asks the same allocation.
 */
import type { ClusterController, ClusterView } from '../../../autoscaler/multitenant/types';
import type { FunctionProvider, FunctionStatus } from '../../../gateway/providers/function-provider';
import type { ReplicaInfo } from '../../../gateway/registry/registry';

export const NS = 'openfaas-fn';

export type Rep = ReplicaInfo & { limit?: number };

/** One setQuota call: its arguments and how many were passed (3: no limit, 4: a limit). */
export interface QuotaCall {
  fn: string;
  id: string;
  quota: number;
  limit?: number;
  args: number;
}

/** Replicas per function: a count, or a count and the cores each reports (absent: the field left out). */
export function recordingProvider(fns: Record<string, number | { n: number; cores?: number }>) {
  const spec = (fn: string) => (typeof fns[fn] === 'number' ? { n: fns[fn] as number } : (fns[fn] as { n: number; cores?: number }));
  const calls: QuotaCall[] = [];
  const reps = new Map<string, Rep[]>();
  const add = (fn: string, i: number) => {
    const cores = spec(fn).cores;
    reps.get(fn)!.push({ id: `${fn}-${i}`, url: 'http://127.0.0.1:1', state: 'ready', agent: 'a', startedAt: new Date(0).toISOString(),
      restarts: 0, weight: 1, quota: 1, ...(cores !== undefined ? { cores } : {}) });
  };
  for (const fn of Object.keys(fns)) {
    reps.set(fn, []);
    for (let i = 0; i < spec(fn).n; i++) add(fn, i);
  }
  const labels = { 'com.openfaas.scale.min': '1', 'com.openfaas.scale.max': '4' };
  const status = (fn: string): FunctionStatus => ({ name: fn, image: 'x', namespace: NS, labels, annotations: {},
    replicas: reps.get(fn)!.length, availableReplicas: reps.get(fn)!.length, createdAt: new Date(0).toISOString(), kind: 'inference' });
  const provider = {
    list: async () => [...reps.keys()].map(status),
    endpoints: async (ref: { name: string }) => reps.get(ref.name)!.map((r) => ({ ...r })),
    async setQuota(ref: { name: string }, id: string, quota: number, limit?: number) {
      if (!(quota > 0 && quota <= 1)) throw new Error(`quota ${quota} must be in (0, 1]`);
      if (limit !== undefined && !(limit >= quota && limit <= 1)) throw new Error(`limit ${limit} must be in [quota ${quota}, 1]`);
      // eslint-disable-next-line prefer-rest-params
      calls.push({ fn: ref.name, id, quota, limit, args: arguments.length });
      Object.assign(reps.get(ref.name)!.find((x) => x.id === id)!, { quota, limit: limit ?? quota });
    },
    async scale(ref: { name: string }, n: number) {
      const l = reps.get(ref.name)!;
      while (l.length < n) add(ref.name, l.length);
      l.length = n;
    },
  } as unknown as FunctionProvider;
  return { provider, calls, reps };
}

/** Always asks the same allocation (job order = the provider's list order), with a reason that names the utility. */
export const fixed = (alloc: Array<{ replicas: number; quota: number }>, reason = 'gave 0.2 core of b to a: utility 1.00 → 1.50'): ClusterController => ({
  name: 'fixed',
  tickS: 1,
  tick: (v: ClusterView) => ({ jobs: v.jobs.map((_, i) => alloc[i]), reason }),
});
