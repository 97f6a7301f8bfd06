/**
 * Shape of a latency-vs-share curve against a reference (issue 22, item 6): each curve is normalised
 * by its own latency at share 1, so two GPUs (the simulator's V100 labels, the H100 grid of
 * ../shared/gpu/README.md section 3) are compared on how latency grows as the share shrinks, not on
 * absolute milliseconds. Pure: numbers in, verdicts out.
 */

/** Latency (ms) of one batch at each share (0..1], share 1 included. */
export type Curve = ReadonlyMap<number, number>;

/** How a curve behaves below half the device. */
export type ShapeClass = 'flat' | 'inverse' | 'between';

export interface ShapeOptions {
  /** A point agrees when model ratio ÷ reference ratio is within [1/tolerance, tolerance]. */
  tolerance: number;
  /** 'flat': latency at the smallest share at most this × the latency at share 1. */
  flatMax: number;
  /** 'inverse' (≈ 1/share below 50 %): elasticity from share 0.5 to the smallest share at least this. */
  inverseMin: number;
}

export const DEFAULT_SHAPE_OPTIONS: ShapeOptions = { tolerance: 1.5, flatMax: 1.3, inverseMin: 0.6 };

export interface PointCheck {
  share: number;
  /** Latency at the share ÷ latency at share 1. */
  modelRatio: number;
  refRatio: number;
  /** modelRatio ÷ refRatio (> 1: the model slows down more than the reference). */
  factor: number;
  agree: boolean;
}

export interface ShapeCheck {
  points: PointCheck[];
  modelClass: ShapeClass;
  refClass: ShapeClass;
  /** −d ln latency / d ln share from 0.5 to the smallest share (1: latency ∝ 1/share; 0: flat). */
  modelElasticity: number;
  refElasticity: number;
  /** The point whose factor is furthest from 1 (in log terms). */
  worst: PointCheck;
  /** Same class and every point within tolerance. */
  agree: boolean;
  /** 'agree'; 'same class' (some point off by more than the tolerance); 'different class'. */
  verdict: 'agree' | 'same class' | 'different class';
}

/** Latency at each share ÷ latency at share 1; throws without a positive share-1 point. */
export function normalise(c: Curve): Map<number, number> {
  const full = c.get(1);
  if (!(full !== undefined && full > 0 && Number.isFinite(full))) throw new Error('curve has no latency at share 1');
  return new Map([...c].map(([s, l]) => [s, l / full]));
}

/** Elasticity of latency in share between 0.5 and the smallest share below it (NaN without both). */
export function elasticity(ratios: ReadonlyMap<number, number>): number {
  const lo = Math.min(...ratios.keys());
  const half = ratios.get(0.5);
  const low = ratios.get(lo);
  if (half === undefined || low === undefined || !(lo < 0.5)) return NaN;
  return Math.log(low / half) / Math.log(0.5 / lo);
}

/** flat / inverse / between, from the ratio at the smallest share and the elasticity below 0.5. */
export function classify(ratios: ReadonlyMap<number, number>, o: ShapeOptions = DEFAULT_SHAPE_OPTIONS): ShapeClass {
  const lo = Math.min(...ratios.keys());
  if ((ratios.get(lo) ?? NaN) <= o.flatMax) return 'flat';
  return elasticity(ratios) >= o.inverseMin ? 'inverse' : 'between';
}

/**
 * Compares `model` with `ref` at the shares `ref` has (every one must be in `model`): per point the
 * two normalised ratios and their quotient, then each curve's class.
 */
export function compareShape(model: Curve, ref: Curve, o: ShapeOptions = DEFAULT_SHAPE_OPTIONS): ShapeCheck {
  const m = normalise(model);
  const r = normalise(ref);
  const shares = [...r.keys()].sort((a, b) => b - a);
  const mm = new Map<number, number>();
  const points: PointCheck[] = shares.map((share) => {
    const modelRatio = m.get(share);
    if (modelRatio === undefined) throw new Error(`model curve has no point at share ${share}`);
    mm.set(share, modelRatio);
    const refRatio = r.get(share)!;
    const factor = modelRatio / refRatio;
    return { share, modelRatio, refRatio, factor, agree: factor <= o.tolerance && factor >= 1 / o.tolerance };
  });
  const worst = points.reduce((w, p) => (Math.abs(Math.log(p.factor)) > Math.abs(Math.log(w.factor)) ? p : w));
  const modelClass = classify(mm, o);
  const refClass = classify(r, o);
  const agree = modelClass === refClass && points.every((p) => p.agree);
  const verdict = agree ? 'agree' : modelClass === refClass ? 'same class' : 'different class';
  return { points, modelClass, refClass, modelElasticity: elasticity(mm), refElasticity: elasticity(r), worst, agree, verdict };
}

/** Section B of the H100 raw log (`{"mode": "grid", "model", "pct", "batch", "p50_ms", "p99_ms"}` lines). */
export interface GridPoint {
  model: string;
  batch: number;
  share: number;
  p50: number;
  p99: number;
}

export function parseGridLog(text: string): GridPoint[] {
  const out: GridPoint[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{') || !line.includes('"grid"')) continue;
    const j = JSON.parse(line) as { mode: string; model: string; pct: string; batch: number; p50_ms: number; p99_ms: number };
    if (j.mode !== 'grid') continue;
    out.push({ model: j.model, batch: j.batch, share: Number(j.pct) / 100, p50: j.p50_ms, p99: j.p99_ms });
  }
  return out;
}

/** One (model, batch) curve of p50 (or p99) from grid points. */
export function gridCurve(points: readonly GridPoint[], model: string, batch: number, which: 'p50' | 'p99' = 'p50'): Map<number, number> {
  return new Map(points.filter((p) => p.model === model && p.batch === batch).map((p) => [p.share, p[which]]));
}
