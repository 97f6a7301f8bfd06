import { F64, fabs, fmax, matrix, sqrt } from './cobyla-linalg';
import { bestToPole, linearModels, reducedParmu, replaceVertex, simplexShape } from './cobyla-simplex';
import { trstlp } from './cobyla-trstlp';

/**
 * COBYLA, Powell's Constrained Optimization BY Linear Approximations (1994), written from the
 * published algorithm: a simplex of n+1 points carries linear models of the objective and of the
 * constraints; each iteration solves the linear trust-region subproblem (trstlp) of radius ρ,
 * evaluates the trial point, replaces a vertex, and ρ halves (from rhoBeg towards rhoEnd) once
 * the simplex is acceptable and no more progress is made. Constraints are g_k(x) ≥ 0; an
 * ℓ∞-penalty parameter μ merges objective and violation. This is the algorithm the Faro
 * artifact called through scipy.optimize.minimize(method='COBYLA') (scipy < 1.16).
 */

export interface CobylaOptions {
  rhoBeg: number;
  rhoEnd: number;
  /** Most objective evaluations (scipy's `maxiter`). */
  maxFun: number;
}

export const COBYLA_DEFAULTS: CobylaOptions = { rhoBeg: 1, rhoEnd: 1e-4, maxFun: 1000 };

export interface CobylaResult {
  x: number[];
  f: number;
  /** Greatest constraint violation at x. */
  maxViolation: number;
  evaluations: number;
  status: 'converged' | 'max-evaluations' | 'rounding';
}

/** Minimises f(x) subject to every component of g(x) being ≥ 0, starting from x0. */
export function cobyla(f: (x: number[]) => number, g: (x: number[]) => number[], x0: readonly number[], opts: Partial<CobylaOptions> = {}): CobylaResult {
  const { rhoBeg, rhoEnd, maxFun } = { ...COBYLA_DEFAULTS, ...opts };
  const n = x0.length;
  const m = g(x0.slice()).length;
  const np = n + 1;
  const mp = m + 1;
  const mpp = m + 2;
  const x = new F64(n + 1);
  for (let i = 1; i <= n; i++) x[i] = x0[i - 1];
  const con = new F64(mpp + 1);
  const sim = matrix(n, np);
  const simi = matrix(n, n);
  const datmat = matrix(mpp, np);
  const a = matrix(n, mp);
  const vsig = new F64(n + 1);
  const veta = new F64(n + 1);
  const sigbar = new F64(n + 1);
  const dx = new F64(n + 1);
  const alpha = 0.25;
  const beta = 2.1;
  const gamma = 0.5;
  const delta = 1.1;
  let rho = rhoBeg;
  let parmu = 0;
  let nfvals = 0;
  let status: CobylaResult['status'] = 'converged';
  for (let i = 1; i <= n; i++) {
    sim[i][np] = x[i];
    sim[i][i] = rho;
    simi[i][i] = 1 / rho;
  }
  let jdrop = np;
  let ibrnch = 0;
  let fval = 0;
  let resmax = 0;
  let iflag = 0;
  let ifull = 0;
  let parsig = 0;
  let prerem = 0;
  let prerec = 0;
  const xs = (): number[] => {
    const out: number[] = [];
    for (let i = 1; i <= n; i++) out.push(x[i]);
    return out;
  };
  const phi = (j: number): number => datmat[mp][j] + parmu * datmat[mpp][j];
  type Label = 'eval' | 'l140' | 'l370' | 'l440' | 'l550' | 'done' | 'fail';
  let at: Label = 'eval';
  for (let guard = 0; guard < 50 * maxFun + 1000; guard++) {
    if (at === 'eval') {
      if (nfvals >= maxFun && nfvals > 0) { status = 'max-evaluations'; at = 'fail'; break; }
      nfvals++;
      const xv = xs();
      fval = f(xv);
      const gv = g(xv);
      resmax = 0;
      for (let k = 1; k <= m; k++) {
        con[k] = gv[k - 1];
        resmax = fmax(resmax, -con[k]);
      }
      con[mp] = fval;
      con[mpp] = resmax;
      if (ibrnch === 1) { at = 'l440'; continue; }
      for (let k = 1; k <= mpp; k++) datmat[k][jdrop] = con[k];
      if (nfvals <= np) {
        // building the initial simplex; keep the best vertex in pole position
        if (jdrop <= n) {
          if (datmat[mp][np] <= fval) x[jdrop] = sim[jdrop][np];
          else {
            sim[jdrop][np] = x[jdrop];
            for (let k = 1; k <= mpp; k++) {
              datmat[k][jdrop] = datmat[k][np];
              datmat[k][np] = con[k];
            }
            for (let k = 1; k <= jdrop; k++) {
              sim[jdrop][k] = -rho;
              let t = 0;
              for (let i = k; i <= jdrop; i++) t -= simi[i][k];
              simi[jdrop][k] = t;
            }
          }
        }
        if (nfvals <= n) {
          jdrop = nfvals;
          x[jdrop] += rho;
          continue;
        }
      }
      ibrnch = 1;
      at = 'l140';
      continue;
    }
    if (at === 'l140') {
      const error = bestToPole(n, mp, mpp, sim, simi, datmat, parmu);
      if (error > 0.1) { status = 'rounding'; at = 'fail'; break; }
      linearModels(n, mp, con, simi, datmat, a);
      parsig = alpha * rho;
      const pareta = beta * rho;
      iflag = simplexShape(n, sim, simi, vsig, veta, parsig, pareta);
      if (ibrnch === 1 || iflag === 1) { at = 'l370'; continue; }
      // geometry step: replace the worst-shaped vertex
      jdrop = 0;
      let t = pareta;
      for (let j = 1; j <= n; j++) if (veta[j] > t) { jdrop = j; t = veta[j]; }
      if (jdrop === 0) for (let j = 1; j <= n; j++) if (vsig[j] < t) { jdrop = j; t = vsig[j]; }
      t = gamma * rho * vsig[jdrop];
      for (let i = 1; i <= n; i++) dx[i] = t * simi[jdrop][i];
      let cvmaxp = 0;
      let cvmaxm = 0;
      let sum = 0;
      for (let k = 1; k <= mp; k++) {
        sum = 0;
        for (let i = 1; i <= n; i++) sum += a[i][k] * dx[i];
        if (k < mp) {
          const c = datmat[k][np];
          cvmaxp = fmax(cvmaxp, -sum - c);
          cvmaxm = fmax(cvmaxm, sum - c);
        }
      }
      const dxsign = parmu * (cvmaxp - cvmaxm) > sum + sum ? -1 : 1;
      for (let i = 1; i <= n; i++) dx[i] *= dxsign;
      replaceVertex(n, sim, simi, dx, jdrop);
      for (let i = 1; i <= n; i++) x[i] = sim[i][np] + dx[i];
      at = 'eval';
      continue;
    }
    if (at === 'l370') {
      ifull = trstlp(n, m, a, con, rho, dx).ifull;
      if (ifull === 0) {
        let t = 0;
        for (let i = 1; i <= n; i++) t += dx[i] * dx[i];
        if (t < 0.25 * rho * rho) { ibrnch = 1; at = 'l550'; continue; }
      }
      let resnew = 0;
      con[mp] = 0;
      let sum = 0;
      for (let k = 1; k <= mp; k++) {
        sum = con[k];
        for (let i = 1; i <= n; i++) sum -= a[i][k] * dx[i];
        if (k < mp) resnew = fmax(resnew, sum);
      }
      let barmu = 0;
      prerec = datmat[mpp][np] - resnew;
      if (prerec > 0) barmu = sum / prerec;
      if (parmu < barmu * 1.5) {
        parmu = barmu * 2;
        const p = phi(np);
        let back = false;
        for (let j = 1; j <= n && !back; j++) {
          const t = phi(j);
          if (t < p || (t === p && parmu === 0 && datmat[mpp][j] < datmat[mpp][np])) back = true;
        }
        if (back) { at = 'l140'; continue; }
      }
      prerem = parmu * prerec - sum;
      for (let i = 1; i <= n; i++) x[i] = sim[i][np] + dx[i];
      ibrnch = 1;
      at = 'eval';
      continue;
    }
    if (at === 'l440') {
      const vmold = phi(np);
      const vmnew = fval + parmu * resmax;
      let trured = vmold - vmnew;
      if (parmu === 0 && fval === datmat[mp][np]) {
        prerem = prerec;
        trured = datmat[mpp][np] - resmax;
      }
      let ratio = trured <= 0 ? 1 : 0;
      jdrop = 0;
      for (let j = 1; j <= n; j++) {
        let t = 0;
        for (let i = 1; i <= n; i++) t += simi[j][i] * dx[i];
        t = fabs(t);
        if (t > ratio) { jdrop = j; ratio = t; }
        sigbar[j] = t * vsig[j];
      }
      let edgmax = delta * rho;
      let l = 0;
      for (let j = 1; j <= n; j++) {
        if (sigbar[j] >= parsig || sigbar[j] >= vsig[j]) {
          let t = veta[j];
          if (trured > 0) {
            t = 0;
            for (let i = 1; i <= n; i++) t += (dx[i] - sim[i][j]) ** 2;
            t = sqrt(t);
          }
          if (t > edgmax) { l = j; edgmax = t; }
        }
      }
      if (l > 0) jdrop = l;
      if (jdrop === 0) { at = 'l550'; continue; }
      replaceVertex(n, sim, simi, dx, jdrop);
      for (let k = 1; k <= mpp; k++) datmat[k][jdrop] = con[k];
      if (trured > 0 && trured >= 0.1 * prerem) { at = 'l140'; continue; }
      at = 'l550';
      continue;
    }
    // l550
    if (iflag === 0) { ibrnch = 0; at = 'l140'; continue; }
    if (rho > rhoEnd) {
      rho *= 0.5;
      if (rho <= rhoEnd * 1.5) rho = rhoEnd;
      if (parmu > 0) parmu = reducedParmu(n, m, mp, datmat, parmu);
      at = 'l140';
      continue;
    }
    at = 'done';
    break;
  }
  if (at === 'done' && ifull === 1) {
    // Powell's code returns the last trial point when the last step was a full trust-region step
    return { x: xs(), f: fval, maxViolation: resmax, evaluations: nfvals, status };
  }
  const best: number[] = [];
  for (let i = 1; i <= n; i++) best.push(sim[i][np]);
  return { x: best, f: datmat[mp][np], maxViolation: datmat[mpp][np], evaluations: nfvals, status };
}
