/**
 * The authors' figures for Dilu's scheduling simulator (sigserverless/Dilu @ 1134655,
 * `scheduling/simulations/baseline/scheduler_*.py` over `instances-N`), as issue 24 and
 * `../shared/multitenant-spec.md` ("Dilu", Anchors) record them from the artifact run outside the
 * repository on 2026-11-26: peak / time-weighted average active GPUs; 3,200 is the mean of 5 runs.
 * Where the issue's table gives one decimal the average is that; otherwise the spec's integer.
 * Exclusive and the Kubernetes default are one artifact file (`scheduler_k8s.py`, plotted as
 * "Exclusive"), hence one row.
 */

export interface AuthorsFigure {
  readonly peak: number;
  readonly avg: number;
}

export type AuthorsPolicy = 'dilu' | 'infless-l' | 'infless-r' | 'exclusive';

export const DILU_AUTHORS: Readonly<Record<number, Readonly<Record<AuthorsPolicy, AuthorsFigure>>>> = {
  100: { 'dilu': { peak: 82, avg: 65.1 }, 'infless-l': { peak: 116, avg: 76.4 }, 'infless-r': { peak: 79, avg: 63.3 }, 'exclusive': { peak: 132, avg: 78.0 } },
  200: { 'dilu': { peak: 155, avg: 124 }, 'infless-l': { peak: 220, avg: 147 }, 'infless-r': { peak: 160, avg: 126 }, 'exclusive': { peak: 242, avg: 156 } },
  400: {
    'dilu': { peak: 263, avg: 197.4 },
    'infless-l': { peak: 346, avg: 247.0 },
    'infless-r': { peak: 272, avg: 201.9 },
    'exclusive': { peak: 386, avg: 262.2 },
  },
  800: { 'dilu': { peak: 499, avg: 337 }, 'infless-l': { peak: 638, avg: 411 }, 'infless-r': { peak: 520, avg: 346 }, 'exclusive': { peak: 693, avg: 445 } },
  1600: {
    'dilu': { peak: 779, avg: 504.1 },
    'infless-l': { peak: 995, avg: 639.5 },
    'infless-r': { peak: 786, avg: 511.3 },
    'exclusive': { peak: 1112, avg: 714.8 },
  },
  3200: {
    'dilu': { peak: 1321, avg: 868.2 },
    'infless-l': { peak: 1720, avg: 1108.1 },
    'infless-r': { peak: 1359, avg: 890.7 },
    'exclusive': { peak: 1879, avg: 1206.9 },
  },
};

/** Fragmentation at the 3,200 peak (SM / memory), the spec's Anchors. */
export const DILU_AUTHORS_FRAG_3200: Readonly<Record<AuthorsPolicy, { sm: number; mem: number }>> = {
  'dilu': { sm: 0.27, mem: 0.13 },
  'infless-l': { sm: 0.17, mem: 0.33 },
  'infless-r': { sm: 0.30, mem: 0.15 },
  'exclusive': { sm: 0.49, mem: 0.39 },
};

/** Dilu's peak GPUs at 3,200 by γ (Ω = 1), the spec's Anchors. */
export const DILU_AUTHORS_GAMMA_3200: ReadonlyArray<{ gamma: number; peak: number }> = [
  { gamma: 1.0, peak: 1724 },
  { gamma: 1.25, peak: 1484 },
  { gamma: 1.5, peak: 1320 },
  { gamma: 1.75, peak: 1314 },
  { gamma: 2.0, peak: 1319 },
];
