/**
 * Faro (EuroSys '25) policy math, ported from the authors' artifact (beomyeol/faro @ b595c4a,
 * src/solver.py, src/utility.py, src/policy.py) in our own code. Pure functions, no I/O.
 *
 * - `mdcLatencyMs(λ, N, pMs, percentile)`: the M/D/c latency model (½ M/M/c wait + p), relaxed
 *   above ρ_max = 0.95; `upperBoundReplicas(λ, pMs, sMs)` = ⌈λp/s⌉.
 * - `relaxedUtility(l, s)` = min(s/l, 1), `stepUtility`; penalties φ for dropped requests.
 * - `evaluate(problem, v)`: the objectives Sum / Fair / FairSum / PenaltySum / PenaltyFairSum.
 * - `cobyla(f, g, x0, { rhoBeg, rhoEnd, maxFun })`: Powell's COBYLA, constraints g(x) ≥ 0.
 * - `solveFaro(problem)`: COBYLA → ceil + remove-lowest-loss → shrink + leftover offer.
 *
 * The long-term policy, for the hybrid autoscaler (every 300 s):
 *
 *   const decide = faroLongTerm({ objective: 'fairsum', capacity: 32 });   // defaults: p 180 ms,
 *   //   s 720 ms, p99, ρ_max 0.95, horizonMin 7, binS 60, upscaleOverheadMin 1, quantileLoop true,
 *   //   startQuantile 0.6, slack 0
 *   const d = decide(jobs.map((j, i) => ({
 *     x0: j.replicas,                      // replicas now (ready + starting)
 *     acceptRate: j.acceptRate,            // penalty variants only, in [0, 1]
 *     forecast: (q) => predictor.forecast(i, j.minuteCounts, 7, q),  // COUNTS per minute
 *   })));
 *   // d.replicas[i], d.acceptRate?.[i] (penalty variants), d.objective, d.utilities, d.quantile, d.reason
 *
 * `forecast(q)` may be called once per quantile tried (0.6, 0.7, 0.8, 0.9); it must not advance
 * any predictor state. Predictors (naive, gaussian, oracle) are in autoscaler/multitenant/predictors.ts.
 * It fits `UtilitySolveFn` of hybrid.ts (`new UtilityLongTerm(name, faroLongTerm(opts), predictor)`).
 * Pass x⁰ ≥ 1: as in the artifact, a replica count ≤ 0 anywhere makes every latency infinite.
 *
 * Cost (measured 2026-11-27 on the shared 2-core box, 67 decisions over the trace, naive forecasts,
 * quantile loop): Sum / FairSum median 20–33 ms CPU, p95 ≤ 85 ms; the penalty variants (twice the
 * variables, four times the constraints) median 130–180 ms.
 *
 * `compareSnapshot` / `summarise` (artifact-compare.ts) check all this against the artifact's own
 * solver on test/fixtures/faro-solver-snapshots.json.
 */
export * from './latency';
export * from './utility';
export * from './objective';
export * from './solver';
export * from './cobyla';
export * from './longterm';
export * from './artifact-compare';
