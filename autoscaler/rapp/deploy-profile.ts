import type { ProfileIO, ProfileStage } from '../../gateway/ports/capability-profiler';
import type { ProfilePoint } from '../../gateway/providers/capability-profile';
import { monotone } from './monotone';
import type { CpuPrediction } from './predict-cpu';
import { requestLimitOf } from './request-limit';

export type { ProfileStage };

/** The agent's measurement and store (the port's `ProfileIO`), and RaPP's CPU predictor. */
export interface DeployProfileDeps extends ProfileIO {
  /** The CPU latency predictor for the function's ONNX file; absent: the grid is measured. */
  predict?(req: { batches: number[]; quotas: number[]; cores: number; anchorMs?: number; vector?: number[] }): Promise<CpuPrediction>;
}

const summary = (pts: readonly ProfilePoint[]) => pts.map((p) => `b${p.batch}@q${p.quota}=${Math.round(p.throughput)}/s`).join(' ');

/**
 * A newly deployed function's capability profile. Measured: every point of the grid (quotas ×
 * batches). Predicted (issue 12), for a CPU replica with an ONNX model: the graph-only prediction
 * at once (stored: the autoscaler can decide before anything is measured), then ONE measured point
 * (batch 1, quota 1) and the prediction relative to it, with that point measured in place.
 * A predictor failure falls back to measuring the grid. With the function's SLO each stage also
 * carries its <request, limit> (Dilu's HGSS over the stage's points, `request-limit.ts`).
 */
export async function profileAtDeploy(deps: DeployProfileDeps, batches: number[], quotas: number[], sloMs?: number): Promise<void> {
  const store = (st: ProfileStage) => {
    const requestLimit = requestLimitOf(st.points, sloMs);
    const rl = requestLimit;
    if (rl) deps.log(`<request, limit> for SLO ${sloMs} ms (${st.source}): <${rl.request}, ${rl.limit}> at batch ${rl.batch}`);
    return deps.store(requestLimit ? { ...st, requestLimit } : st);
  };
  if (deps.predict) {
    try {
      const graphOnly = await deps.predict({ batches, quotas, cores: 1 });
      await store({ points: monotone(graphOnly.points), source: 'predicted', measuredPoints: 0 });
      deps.log(`capability profile predicted from the model's graph in ${graphOnly.ms} ms: ${summary(graphOnly.points)}`);
      const [anchor] = await deps.measure([1], [1]);
      // the graph's features from the first answer: the model file is parsed once
      const rel = await deps.predict({ batches, quotas, cores: 1, anchorMs: anchor.latencyMs, vector: graphOnly.vector });
      const points = rel.points.map((p) => (p.batch === 1 && p.quota === 1 ? anchor : p));
      await store({ points: monotone(points), source: 'calibrated', measuredPoints: 1 });
      deps.log(`capability profile from 1 measured point (b1@q1 ${anchor.latencyMs} ms; the graph alone said ` +
        `${graphOnly.points.find((p) => p.batch === 1 && p.quota === 1)?.latencyMs} ms) and the predictor: ${summary(points)}`);
      return;
    } catch (e) {
      deps.log(`capability prediction failed (${(e as Error).message}); measuring the whole grid`);
    }
  }
  const points = await deps.measure(batches, quotas);
  await store({ points: monotone(points), source: 'measured', measuredPoints: points.length });
  deps.log(`capability profile: ${summary(points)}`);
}
