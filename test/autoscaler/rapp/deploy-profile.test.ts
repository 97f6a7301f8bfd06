/**
 * The deploy-time profile's stages (autoscaler/rapp/deploy-profile.ts): measured, or
 * predicted from the graph, then from one measured point; a failing predictor falls back to
 * measuring the grid. The measurement and the predictor are stand-ins here (the real ones run in
 * test/integration/predicted-profile.test.ts).
 */
import { profileAtDeploy, ProfileStage } from '../../../autoscaler/rapp/deploy-profile';
import type { ProfilePoint } from '../../../node-runtime/profiler';

const pt = (batch: number, quota: number, latencyMs: number): ProfilePoint => ({ batch, quota, smShare: 1, latencyMs, throughput: (1000 * batch) / latencyMs });

function deps(predict?: (anchorMs?: number) => ProfilePoint[]) {
  const stored: ProfileStage[] = [];
  const measured: Array<[number[], number[]]> = [];
  const logs: string[] = [];
  const predicts: Array<number | undefined> = [];
  const vectors: Array<number[] | undefined> = [];
  return {
    stored,
    measured,
    logs,
    predicts,
    vectors,
    d: {
      measure: async (b: number[], q: number[]) => {
        measured.push([b, q]);
        return q.flatMap((quota) => b.map((batch) => pt(batch, quota, (10 * batch) / quota)));
      },
      store: async (s: ProfileStage) => void stored.push(s),
      log: (l: string) => void logs.push(l),
      predict: predict && (async (req: { anchorMs?: number; vector?: number[] }) => {
        predicts.push(req.anchorMs);
        vectors.push(req.vector);
        return { points: predict(req.anchorMs), vector: [7, 8], ms: 5 };
      }),
    },
  };
}

describe('profileAtDeploy', () => {
  const B = [1, 2, 4];
  const Q = [1, 0.5, 0.25];

  it('measured: every point of the grid, stored once', async () => {
    const t = deps();
    await profileAtDeploy(t.d, B, Q);
    expect(t.measured).toEqual([[B, Q]]);
    expect(t.stored).toHaveLength(1);
    expect(t.stored[0]).toEqual(expect.objectContaining({ source: 'measured', measuredPoints: 9 }));
  });

  it('predicted: the graph-only grid at once, then one measured point and the grid relative to it', async () => {
    // the graph alone says 20 ms at b1@q1; the replica measures 10; relative to it, 12 ms at b2@q1
    const t = deps((anchor) => Q.flatMap((q) => B.map((b) => pt(b, q,
      anchor === undefined ? (20 * b) / q : b === 2 && q === 1 ? 12 : (anchor * 1.3 * b) / q))));
    await profileAtDeploy(t.d, B, Q);
    expect(t.predicts).toEqual([undefined, 10]);
    expect(t.vectors).toEqual([undefined, [7, 8]]); // the second asks with the first's features: one parse
    expect(t.measured).toEqual([[[1], [1]]]); // one point instead of nine
    expect(t.stored.map((s) => [s.source, s.measuredPoints])).toEqual([['predicted', 0], ['calibrated', 1]]);
    expect(t.stored[0].points).toHaveLength(9);
    const cal = t.stored[1].points;
    expect(cal.find((p) => p.batch === 1 && p.quota === 1)!.latencyMs).toBe(10); // the measured point itself
    expect(cal.find((p) => p.batch === 2 && p.quota === 1)!.latencyMs).toBe(12);
    // made monotone like a measured profile: less quota is never faster
    for (const b of B) {
      const row = cal.filter((p) => p.batch === b).sort((x, y) => y.quota - x.quota);
      for (let i = 1; i < row.length; i++) expect(row[i].latencyMs).toBeGreaterThanOrEqual(row[i - 1].latencyMs);
    }
    expect(t.logs.join('\n')).toMatch(/from 1 measured point \(b1@q1 10 ms; the graph alone said 20 ms\)/);
  });

  it('a failing predictor falls back to measuring the grid, and says so', async () => {
    const t = deps(() => {
      throw new Error('model.onnx: not an ONNX file');
    });
    await profileAtDeploy(t.d, B, Q);
    expect(t.measured).toEqual([[B, Q]]);
    expect(t.stored.map((s) => s.source)).toEqual(['measured']);
    expect(t.logs[0]).toMatch(/capability prediction failed \(model.onnx: not an ONNX file\); measuring the whole grid/);
  });
});
