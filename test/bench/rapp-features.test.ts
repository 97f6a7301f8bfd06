import { featureRow, lnAnchor, modelVector } from '../../bench/rapp/v100-features';

/** A graph shaped like RaPP's JSON: 38 node features (32 static, 6 runtime), 10 graph features (5 static, 5 runtime: batch-1 latency at quotas 0.2..1). */
const graph = {
  node_features: [Array.from({ length: 38 }, (_, k) => k), Array.from({ length: 38 }, (_, k) => 2 * k)],
  graph_features: [1, 2, 3, 4, 5, 100, 50, 40, 30, 20],
};

describe('V100 predictor features (mirror of bench/rapp/v100_cv.py)', () => {
  test('the anchor is the profiled latency at the quota: knots, ln-linear between, 1/q below 0.2', () => {
    expect(lnAnchor(graph.graph_features, 0.2)).toBeCloseTo(Math.log(100), 12);
    expect(lnAnchor(graph.graph_features, 1)).toBeCloseTo(Math.log(20), 12);
    expect(lnAnchor(graph.graph_features, 0.5)).toBeCloseTo((Math.log(50) + Math.log(40)) / 2, 12);
    expect(lnAnchor(graph.graph_features, 0.1)).toBeCloseTo(Math.log(200), 12);
  });

  test('pooled vector: 32 means, 32 log-sums, 5 static graph, ln nodes, 6 runtime means, 5 runtime graph', () => {
    const v = modelVector(graph);
    expect(v).toHaveLength(32 + 32 + 5 + 1 + 6 + 5);
    expect(v[3]).toBeCloseTo(4.5, 12); // mean of 3 and 6
    expect(v[32 + 3]).toBeCloseTo(Math.log1p(9), 12);
    expect(v[69]).toBeCloseTo(Math.log(2), 12);
    expect(v[70]).toBeCloseTo(48, 12); // mean of 32 and 64
    const row = featureRow(graph, v, 4, 0.5, 0.5);
    expect(row).toHaveLength(v.length + 7);
    expect(row.slice(v.length, v.length + 6)).toEqual([4, 0.5, 0.5, Math.log(4), Math.log(0.5), Math.log(0.5)]);
    expect(row[row.length - 1]).toBeCloseTo(lnAnchor(graph.graph_features, 0.5), 12);
  });
});
