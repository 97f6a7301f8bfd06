import { damp } from '../../../autoscaler/multitenant/live/capacity';
import { bestFitPlace } from '../../../autoscaler/multitenant/live/kube-placement';
import { tradeOff } from '../../../autoscaler/multitenant/live/trade-off';
import type { JobView } from '../../../autoscaler/multitenant/types';
import type { NodeView, PodNeed } from '../../../gateway/providers/kubernetes/placement-gate';

const job = (name: string, rps: number): JobView => ({
  name, processingMs: 100, sloMs: 500, sloPercentile: 99, replicas: 1, readyReplicas: 1, quota: 1, minuteCounts: [], queueLength: 0, inFlight: 0,
  recentLatencyMs: { mean: NaN, pct: NaN, windowS: 5 }, droppedLastTick: 0, arrivalRps: rps,
});

describe('the runner\'s words for any controller\'s decision', () => {
  it('names who gave cores to whom and the utility before and after', () => {
    const from = [{ replicas: 1, quota: 1, acceptRate: 1 }, { replicas: 1, quota: 0.2, acceptRate: 1 }];
    const to = [{ replicas: 1, quota: 0.4, acceptRate: 1 }, { replicas: 1, quota: 0.8, acceptRate: 1 }];
    const s = tradeOff([job('idle', 0), job('busy', 6)], from, to);
    expect(s).toMatch(/^gave 0\.6 core of idle to busy \(\+0\.6\): utility (\S+) → (\S+)$/);
    const [a, b] = s.match(/utility (\S+) → (\S+)/)!.slice(1).map(Number);
    expect(b).toBeGreaterThan(a); // busy was starved (0.2 core for 0.6 core of load), idle loses nothing it uses
  });

  it('skips quota changes too small to matter unless the capacity needs them', () => {
    const t = (quota: number) => ({ replicas: 1, quota, acceptRate: 1 });
    expect(damp([t(0.51), t(0.7)], [0.5, 0.5], 2).map((x) => x.quota)).toEqual([0.5, 0.7]);
    // keeping 0.5 where 0.49 was asked would exceed a cluster of 1.19
    expect(damp([t(0.49), t(0.7)], [0.5, 0.5], 1.19).map((x) => x.quota)).toEqual([0.49, 0.7]);
  });
});

describe('best-fit placement of a pod (Kubernetes)', () => {
  const pod = (o: Partial<PodNeed>): PodNeed => ({ namespace: 'ns', name: 'p', fn: 'f', cores: 1, wholeGpus: 0, ...o });
  const node = (name: string, cpus: number, gpus: number, pods: NodeView['pods'] = []): NodeView => ({ name, cpus, gpus, pods });

  it('packs fractional GPU shares onto the fullest GPU that holds them, never past a whole one', () => {
    const n1 = node('n1', 8, 2, [{ ...pod({ gpuShare: 0.5 }), gpu: 1 }]);
    const n2 = node('n2', 8, 2, [{ ...pod({ gpuShare: 0.7 }), gpu: 0 }]);
    expect(bestFitPlace(pod({ gpuShare: 0.3 }), [n1, n2])).toMatchObject({ node: 'n2', gpu: 0 });
    expect(bestFitPlace(pod({ gpuShare: 0.5 }), [n1, n2])).toMatchObject({ node: 'n1', gpu: 1 });
    const full = node('n3', 8, 1, [{ ...pod({ gpuShare: 0.8 }), gpu: 0 }]);
    expect(bestFitPlace(pod({ gpuShare: 0.5 }), [full])).toEqual({ wait: 'no GPU has 0.50 of its SM share free' });
  });

  it('keeps whole-GPU pods off shared GPUs and CPU pods on the fullest node that fits', () => {
    const shared = node('n1', 8, 2, [{ ...pod({ gpuShare: 0.5 }), gpu: 0 }]);
    expect(bestFitPlace(pod({ wholeGpus: 2 }), [shared, node('n2', 8, 2)])).toMatchObject({ node: 'n2' });
    expect(bestFitPlace(pod({ wholeGpus: 1 }), [shared, node('n2', 8, 2)])).toMatchObject({ node: 'n1' });
    expect(bestFitPlace(pod({ cores: 1 }), [node('big', 4, 0), node('small', 2, 0, [pod({ cores: 0.5 })])])).toMatchObject({ node: 'small' });
    expect(bestFitPlace(pod({ cores: 3 }), [node('small', 2, 0)])).toMatchObject({ wait: expect.stringMatching(/no node has 3\.00 core/) });
  });
});
