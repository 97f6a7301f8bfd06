/**
 * Faro (EuroSys '25) policy math, ported from the authors' artifact (beomyeol/faro @ b595c4a,
 * src/solver.py, src/utility.py, src/policy.py) in our own code. Pure functions, no I/O.
 *
 * - `mdcLatencyMs(λ, N, pMs, percentile)`: the M/D/c latency model (½ M/M/c wait + p), relaxed
 *   above ρ_max = 0.95; `upperBoundReplicas(λ, pMs, sMs)` = ⌈λp/s⌉.
 * - `relaxedUtility(l, s)` = min(s/l, 1), `stepUtility`; penalties φ for dropped requests.
 *
 * The long-term policy (added next, same module) is
 *
 *   faroLongTerm(opts: FaroLongTermOptions)
 *     => (jobs: Array<{ x0: number; acceptRate?: number; forecast: (q: number) => number[] }>, spare?: number)
 *     => { replicas: number[]; acceptRate?: number[]; objective: number; quantile: number; reason: string }
 *
 * where `forecast(q)` returns the job's predicted request COUNTS per minute for the next
 * `horizonMin` (7) minutes at forecast quantile q (the solver divides by 60 to get req/s), `x0`
 * is the job's current replica count, and opts carries { objective: 'sum' | 'fair' | 'fairsum' |
 * 'penaltysum' | 'penaltyfairsum', capacity (R), processingMs (180), sloMs (720), percentile (99),
 * quantileLoop (true), startQuantile (0.6) … }. The simulator calls it every 300 s.
 */
export * from './latency';
export * from './utility';
