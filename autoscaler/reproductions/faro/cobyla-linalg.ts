/** Small dense-matrix helpers of the COBYLA port (1-based arrays, index 0 unused). */

// Plain comparisons instead of Math.max/min/abs, and Math functions held in module constants: under
// jest's VM context every lookup of the global `Math` costs ~20-30× more (measured: 1M Math.log calls
// 400 ms, through a constant 13 ms), and the solver makes ~10⁶ such calls per decision. The
// operands are never NaN here.
export const { sqrt, log: ln, trunc } = Math;
export const INF = 1 / 0;
export const F64 = Float64Array;
export const I32 = Int32Array;
export const fmax = (a: number, b: number): number => (a > b ? a : b);
export const fmin = (a: number, b: number): number => (a < b ? a : b);
export const fabs = (a: number): number => (a < 0 ? -a : a);

export type Mat = Float64Array[];

export function matrix(rows: number, cols: number): Mat {
  const out: Mat = [];
  for (let i = 0; i <= rows; i++) out.push(new F64(cols + 1));
  return out;
}

/** Rounding test of Powell's code: is `value` indistinguishable from zero next to `absSum`? */
export function negligible(absSum: number, value: number): boolean {
  const acca = absSum + 0.1 * fabs(value);
  const accb = absSum + 0.2 * fabs(value);
  return absSum >= acca || acca >= accb;
}

/** Givens rotation of columns k and k+1 of z so that active constraint kp's row moves to position k. */
export function rotateDown(n: number, z: Mat, zdota: Float64Array, a: Mat, k: number, kw: number): void {
  const kp = k + 1;
  let sp = 0;
  for (let i = 1; i <= n; i++) sp += z[i][k] * a[i][kw];
  const temp = sqrt(sp * sp + zdota[kp] * zdota[kp]);
  const alpha = zdota[kp] / temp;
  const beta = sp / temp;
  zdota[kp] = alpha * zdota[k];
  zdota[k] = temp;
  for (let i = 1; i <= n; i++) {
    const t = alpha * z[i][kp] + beta * z[i][k];
    z[i][kp] = alpha * z[i][k] - beta * z[i][kp];
    z[i][k] = t;
  }
}

/** Moves active constraint `icon` to the end of the active list (positions icon..nact). */
export function cycleToEnd(n: number, z: Mat, zdota: Float64Array, a: Mat, iact: Int32Array, vmultc: Float64Array, icon: number, nact: number): void {
  if (icon >= nact) return;
  const isave = iact[icon];
  const vsave = vmultc[icon];
  let k = icon;
  do {
    const kw = iact[k + 1];
    rotateDown(n, z, zdota, a, k, kw);
    iact[k] = kw;
    vmultc[k] = vmultc[k + 1];
    k++;
  } while (k < nact);
  iact[k] = isave;
  vmultc[k] = vsave;
}
