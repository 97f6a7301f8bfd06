import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

/** A request-arrival trace: per series, a request count per interval. */
export interface Trace {
  name: string;
  /** Length of one count's interval, s. */
  intervalS: number;
  series: Array<{ name: string; counts: number[] }>;
}

export interface TraceOptions {
  /** Multiplies every count (after any format-defined scaling). */
  scale?: number;
  /** Azure 2019 / Faro scaled file: which day (1-based). */
  day?: number;
  /** Faro scaled file: which sample (0 = real). */
  sample?: number;
  /** Dilu patterns: requests per second per unit (Dilu's generators use 5). */
  diluMultiplier?: number;
  /** HAS-GPU files: 'rps' (each value held as req/s for its 5 s slot, as the authors' client sends) or 'count' (requests per slot). */
  hasgpuUnit?: 'rps' | 'count';
  /** Keep at most this many series. */
  maxSeries?: number;
  /** Keep at most this many seconds. */
  maxDurationS?: number;
}

/**
 * Reads any trace format of `../shared/data/traces/` (see its README):
 * HAS-GPU `rps.json`/`stress.json`, Dilu `*.txt` (one base RPS per second), Faro
 * `faro_eval_10jobs_6h_per_minute.csv` / `…_input.jsonl` / `faro_top9_twitter_scaled_…csv`, Azure
 * 2019 `azure2019_…per_minute.csv`, Azure LLM 2023 `AzureLLMInferenceTrace_*.csv` (binned to
 * seconds), and a generic CSV whose first column is the interval index (header `minute` or
 * `second`).
 */
export function readTrace(file: string, opt: TraceOptions = {}): Trace {
  const text = readFileSync(file, 'utf8');
  const name = basename(file);
  let t: Trace;
  if (name.endsWith('.json')) {
    const j = JSON.parse(text);
    if (!Array.isArray(j.processed_request_counts)) throw new Error(`${file}: not a HAS-GPU workload (no processed_request_counts)`);
    const slot = parseFloat(String(j.parameters?.duration ?? '5s')) || 5;
    const unit = opt.hasgpuUnit ?? 'rps';
    t = { name, intervalS: slot, series: [{ name: String(j.parameters?.function_name ?? 'fn'),
      counts: j.processed_request_counts.map((v: number) => (unit === 'rps' ? v * slot : v)) }] };
  } else if (name.endsWith('.txt')) {
    const m = opt.diluMultiplier ?? 5;
    const counts = text.split('\n').filter((l) => l.trim()).map((l) => Math.floor(Number(l) * m));
    t = { name, intervalS: 1, series: [{ name: name.replace(/\.txt$/, ''), counts }] };
  } else if (name.endsWith('.jsonl')) {
    const rows = text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
    const jobs = Object.keys(rows[0].counts);
    t = { name, intervalS: 60, series: jobs.map((job) => ({ name: job, counts: rows.map((r) => Number(Object.values(r.counts[job] ?? {})[0] ?? 0)) })) };
  } else {
    const lines = text.split('\n').filter((l) => l.trim());
    const head = lines[0].split(',');
    if (head[0] === 'TIMESTAMP') {
      const secs = lines.slice(1).map((l) => Date.parse(l.split(',')[0].replace(' ', 'T').slice(0, 23) + 'Z') / 1000);
      const t0 = Math.floor(Math.min(...secs));
      const counts = new Array(Math.ceil(Math.max(...secs) - t0) + 1).fill(0);
      for (const s of secs) counts[Math.floor(s - t0)]++;
      t = { name, intervalS: 1, series: [{ name: name.replace(/\.csv$/, ''), counts }] };
    } else if (head[0] === 'HashFunction') {
      const day = opt.day ?? 1;
      const rows = lines.slice(1).map((l) => l.split(',')).filter((r) => Number(r[1]) === day);
      if (rows.length === 0) throw new Error(`${file}: no rows for day ${day}`);
      t = { name: `${name} d${day}`, intervalS: 60, series: rows.map((r) => ({ name: r[0].slice(0, 8), counts: r.slice(2).map(Number) })) };
    } else if (head[0] === 'job') {
      const day = opt.day ?? 11;
      const sample = opt.sample ?? 0;
      const rows = lines.slice(1).map((l) => l.split(',')).filter((r) => Number(r[2]) === day && Number(r[3]) === sample);
      if (rows.length === 0) throw new Error(`${file}: no rows for day ${day} sample ${sample}`);
      t = { name: `${name} d${day}`, intervalS: 60, series: rows.map((r) => ({ name: r[0], counts: r.slice(4).map(Number) })) };
    } else if (head[0] === 'minute' || head[0] === 'second') {
      const rows = lines.slice(1).map((l) => l.split(',').map(Number));
      t = { name, intervalS: head[0] === 'minute' ? 60 : 1, series: head.slice(1).map((h, i) => ({ name: h, counts: rows.map((r) => r[i + 1]) })) };
    } else throw new Error(`${file}: unknown trace format (first header "${head[0]}")`);
  }
  const scale = opt.scale ?? 1;
  if (scale !== 1) for (const s of t.series) s.counts = s.counts.map((c) => c * scale);
  if (opt.maxSeries !== undefined) t.series = t.series.slice(0, opt.maxSeries);
  if (opt.maxDurationS !== undefined) {
    const n = Math.max(1, Math.floor(opt.maxDurationS / t.intervalS));
    for (const s of t.series) s.counts = s.counts.slice(0, n);
  }
  return t;
}

/** Trace duration, s. */
export function traceDurationS(t: Trace): number {
  return Math.max(0, ...t.series.map((s) => s.counts.length)) * t.intervalS;
}
