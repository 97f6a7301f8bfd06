/** Small dense-matrix helpers of the COBYLA port (1-based arrays, index 0 unused). */

export type Mat = Float64Array[];

export function matrix(rows: number, cols: number): Mat {
  const out: Mat = [];
  for (let i = 0; i <= rows; i++) out.push(new Float64Array(cols + 1));
  return out;
}

/** Rounding test of Powell's code: is `value` indistinguishable from zero next to `absSum`? */
export function negligible(absSum: number, value: number): boolean {
  const acca = absSum + 0.1 * Math.abs(value);
  const accb = absSum + 0.2 * Math.abs(value);
  return absSum >= acca || acca >= accb;
}

/** Givens rotation of columns k and k+1 of z so that active constraint kp's row moves to position k. */
export function rotateDown(n: number, z: Mat, zdota: Float64Array, a: Mat, k: number, kw: number): void {
  const kp = k + 1;
  let sp = 0;
  for (let i = 1; i <= n; i++) sp += z[i][k] * a[i][kw];
  const temp = Math.sqrt(sp * sp + zdota[kp] * zdota[kp]);
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
