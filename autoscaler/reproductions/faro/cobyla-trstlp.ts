/**
 * TRSTLP, the subproblem of Powell's COBYLA (M. J. D. Powell, "A direct search optimization method
 * that models the objective and constraint functions by linear interpolation", 1994), written
 * from the published algorithm. Arrays are 1-based (index 0 unused) to follow the paper's notation.
 *
 * Finds dx with |dx| ≤ rho: stage one minimises the greatest violation of the linear constraints
 * a(·,k)·dx ≥ b(k), k = 1..m; if dx is still shorter than rho, stage two uses the freedom left to
 * minimise −a(·,m+1)·dx (column m+1 holds minus the objective's gradient) without increasing
 * that violation. Returns ifull = 0 when a degeneracy stopped dx short of length rho.
 */
import { F64, I32, fabs, fmax, fmin, matrix, negligible, rotateDown, cycleToEnd, sqrt, type Mat } from './cobyla-linalg';

/**
 * Literals scipy's trstlp.f (the copy the artifact ran) writes in single precision despite IMPLICIT
 * DOUBLE PRECISION (1.0E-6, 0.1, 0.2, 2.2E-16): their double values differ from the decimal ones.
 */
const SINGLE_1EM6 = Math.fround(1e-6);
const SINGLE_01 = Math.fround(0.1);
const SINGLE_02 = Math.fround(0.2);
const SINGLE_EPS = Math.fround(2.2e-16);

export function trstlp(n: number, m: number, a: Mat, b: Float64Array, rho: number, dx: Float64Array): { ifull: number } {
  const z = matrix(n, n);
  const zdota = new F64(n + 2);
  const vmultc = new F64(m + 2);
  const vmultd = new F64(m + 2);
  const sdirn = new F64(n + 1);
  const dxnew = new F64(n + 1);
  const iact = new I32(m + 2);
  let ifull = 1;
  let mcon = m;
  let nact = 0;
  let resmax = 0;
  let icon = 0;
  let resold = 0;
  for (let i = 1; i <= n; i++) {
    z[i][i] = 1;
    dx[i] = 0;
  }
  for (let k = 1; k <= m; k++) {
    if (b[k] > resmax) {
      resmax = b[k];
      icon = k;
    }
  }
  for (let k = 1; k <= m; k++) {
    iact[k] = k;
    vmultc[k] = resmax - b[k];
  }
  let stage = resmax === 0 ? 'two' : 'one';
  let optold = 0;
  let icount = 0;
  let nactx = 0;
  // each pass of this loop is one iteration of the active-set method; bounded for safety
  for (let guard = 0; guard < 100000; guard++) {
    if (stage === 'two') {
      // 480: switch to stage two (the objective becomes active constraint m+1)
      mcon = m + 1;
      icon = mcon;
      iact[mcon] = mcon;
      vmultc[mcon] = 0;
      stage = 'run';
      optold = 0;
      icount = 0;
    } else if (stage === 'one') {
      for (let i = 1; i <= n; i++) sdirn[i] = 0;
      stage = 'run';
      optold = 0;
      icount = 0;
    }
    // 70: stop the stage after 3 iterations without progress
    let optnew = 0;
    if (mcon === m) optnew = resmax;
    else for (let i = 1; i <= n; i++) optnew -= dx[i] * a[i][mcon];
    if (icount === 0 || optnew < optold) {
      optold = optnew;
      nactx = nact;
      icount = 3;
    } else if (nact > nactx) {
      nactx = nact;
      icount = 3;
    } else {
      icount--;
      if (icount === 0) {
        if (mcon === m) { stage = 'two'; continue; }
        return { ifull: 0 };
      }
    }
    if (icon > nact) {
      // add constraint iact[icon] to the active set
      const kk = iact[icon];
      for (let i = 1; i <= n; i++) dxnew[i] = a[i][kk];
      let tot = 0;
      for (let k = n; k > nact; k--) {
        let sp = 0;
        let spabs = 0;
        for (let i = 1; i <= n; i++) {
          const t = z[i][k] * dxnew[i];
          sp += t;
          spabs += fabs(t);
        }
        if (negligible(spabs, sp)) sp = 0;
        if (tot === 0) tot = sp;
        else {
          const kp = k + 1;
          const t = sqrt(sp * sp + tot * tot);
          const alpha = sp / t;
          const beta = tot / t;
          tot = t;
          for (let i = 1; i <= n; i++) {
            const u = alpha * z[i][k] + beta * z[i][kp];
            z[i][kp] = alpha * z[i][kp] - beta * z[i][k];
            z[i][k] = u;
          }
        }
      }
      if (tot !== 0) {
        nact++;
        zdota[nact] = tot;
        vmultc[icon] = vmultc[nact];
        vmultc[nact] = 0;
      } else {
        // the new gradient depends on the active ones: find the constraint to delete
        let ratio = -1;
        for (let k = nact; k > 0; k--) {
          let zdotv = 0;
          let zdvabs = 0;
          for (let i = 1; i <= n; i++) {
            const t = z[i][k] * dxnew[i];
            zdotv += t;
            zdvabs += fabs(t);
          }
          if (!negligible(zdvabs, zdotv)) {
            const t = zdotv / zdota[k];
            if (t > 0 && iact[k] <= m) {
              const tempa = vmultc[k] / t;
              if (ratio < 0 || tempa < ratio) {
                ratio = tempa;
              }
            }
            if (k >= 2) {
              const kw = iact[k];
              for (let i = 1; i <= n; i++) dxnew[i] -= t * a[i][kw];
            }
            vmultd[k] = t;
          } else vmultd[k] = 0;
        }
        if (ratio < 0) {
          if (mcon === m) { stage = 'two'; continue; }
          return { ifull: 0 };
        }
        for (let k = 1; k <= nact; k++) vmultc[k] = fmax(0, vmultc[k] - ratio * vmultd[k]);
        // Powell's code cycles position ICON here (its IOUT is never used); ICON > NACT, so nothing moves
        cycleToEnd(n, z, zdota, a, iact, vmultc, icon, nact);
        let t = 0;
        for (let i = 1; i <= n; i++) t += z[i][nact] * a[i][kk];
        if (t === 0) {
          if (mcon === m) { stage = 'two'; continue; }
          return { ifull: 0 };
        }
        zdota[nact] = t;
        vmultc[icon] = 0;
        vmultc[nact] = ratio;
      }
      // 210
      iact[icon] = iact[nact];
      iact[nact] = kk;
      if (mcon > m && kk !== mcon) {
        const k = nact - 1;
        rotateDown(n, z, zdota, a, k, kk);
        iact[nact] = iact[k];
        iact[k] = kk;
        const t = vmultc[k];
        vmultc[k] = vmultc[nact];
        vmultc[nact] = t;
      }
      if (mcon > m) {
        const t = 1 / zdota[nact];
        for (let i = 1; i <= n; i++) sdirn[i] = t * z[i][nact];
      } else {
        const kk2 = iact[nact];
        let t = 0;
        for (let i = 1; i <= n; i++) t += sdirn[i] * a[i][kk2];
        t = (t - 1) / zdota[nact];
        for (let i = 1; i <= n; i++) sdirn[i] -= t * z[i][nact];
      }
    } else {
      // 260: delete constraint iact[icon] from the active set
      cycleToEnd(n, z, zdota, a, iact, vmultc, icon, nact);
      nact--;
      if (mcon > m) {
        const t = 1 / zdota[nact];
        for (let i = 1; i <= n; i++) sdirn[i] = t * z[i][nact];
      } else {
        let t = 0;
        for (let i = 1; i <= n; i++) t += sdirn[i] * z[i][nact + 1];
        for (let i = 1; i <= n; i++) sdirn[i] -= t * z[i][nact + 1];
      }
    }
    // 340: step to the trust-region boundary, or the step that makes resmax zero
    let dd = rho * rho;
    let sd = 0;
    let ss = 0;
    for (let i = 1; i <= n; i++) {
      if (fabs(dx[i]) >= SINGLE_1EM6 * rho) dd -= dx[i] * dx[i];
      sd += dx[i] * sdirn[i];
      ss += sdirn[i] * sdirn[i];
    }
    if (dd <= 0) {
      if (mcon === m) { stage = 'two'; continue; }
      return { ifull: 0 };
    }
    let temp = sqrt(ss * dd);
    if (fabs(sd) >= SINGLE_1EM6 * temp) temp = sqrt(ss * dd + sd * sd);
    const stpful = dd / (temp + sd);
    let step = stpful;
    if (mcon === m) {
      if (negligible(step, resmax)) { stage = 'two'; continue; }
      step = fmin(step, resmax);
    }
    for (let i = 1; i <= n; i++) dxnew[i] = dx[i] + step * sdirn[i];
    if (mcon === m) {
      resold = resmax;
      resmax = 0;
      for (let k = 1; k <= nact; k++) {
        const kk = iact[k];
        let t = b[kk];
        for (let i = 1; i <= n; i++) t -= a[i][kk] * dxnew[i];
        resmax = fmax(resmax, t);
      }
    }
    for (let k = nact; k >= 1; k--) {
      let zdotw = 0;
      let zdwabs = 0;
      for (let i = 1; i <= n; i++) {
        const t = z[i][k] * dxnew[i];
        zdotw += t;
        zdwabs += fabs(t);
      }
      if (negligible(zdwabs, zdotw)) zdotw = 0;
      vmultd[k] = zdotw / zdota[k];
      if (k >= 2) {
        const kk = iact[k];
        for (let i = 1; i <= n; i++) dxnew[i] -= vmultd[k] * a[i][kk];
      }
    }
    if (mcon > m) vmultd[nact] = fmax(0, vmultd[nact]);
    for (let i = 1; i <= n; i++) dxnew[i] = dx[i] + step * sdirn[i];
    for (let k = nact + 1; k <= mcon; k++) {
      const kk = iact[k];
      let sum = resmax - b[kk];
      let sumabs = resmax + fabs(b[kk]);
      for (let i = 1; i <= n; i++) {
        const t = a[i][kk] * dxnew[i];
        sum += t;
        sumabs += fabs(t);
      }
      if (sumabs >= sumabs + SINGLE_01 * fabs(sum) || sumabs + SINGLE_01 * fabs(sum) >= sumabs + SINGLE_02 * fabs(sum)) sum = 0;
      vmultd[k] = sum;
    }
    let ratio = 1;
    icon = 0;
    for (let k = 1; k <= mcon; k++) {
      if (vmultd[k] > -SINGLE_EPS && vmultd[k] < SINGLE_EPS) vmultd[k] = 0; // scipy's guard against cycling
      if (vmultd[k] < 0) {
        const t = vmultc[k] / (vmultc[k] - vmultd[k]);
        if (t < ratio) {
          ratio = t;
          icon = k;
        }
      }
    }
    const keep = 1 - ratio;
    for (let i = 1; i <= n; i++) dx[i] = keep * dx[i] + ratio * dxnew[i];
    for (let k = 1; k <= mcon; k++) vmultc[k] = fmax(0, keep * vmultc[k] + ratio * vmultd[k]);
    if (mcon === m) resmax = resold + ratio * (resmax - resold);
    if (icon > 0) continue;
    if (step === stpful) return { ifull };
    stage = 'two';
  }
  return { ifull: 0 };
}
