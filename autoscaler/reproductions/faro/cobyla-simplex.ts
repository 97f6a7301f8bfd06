import { F64, fabs, fmax, fmin, sqrt, type Mat } from './cobyla-linalg';

/**
 * Simplex bookkeeping of the COBYLA port (1-based). `sim` holds the pole x⁽⁰⁾ in column n+1 and
 * the edges x⁽ʲ⁾ − x⁽⁰⁾ in columns 1..n; `simi` is the inverse of the edge matrix; `datmat` holds,
 * per vertex, the constraint values, then f, then the greatest violation.
 */

/** Replaces edge `jd` by the step `dx` and updates the inverse. */
export function replaceVertex(n: number, sim: Mat, simi: Mat, dx: Float64Array, jd: number): void {
  let t = 0;
  for (let i = 1; i <= n; i++) {
    sim[i][jd] = dx[i];
    t += simi[jd][i] * dx[i];
  }
  for (let i = 1; i <= n; i++) simi[jd][i] /= t;
  for (let j = 1; j <= n; j++) {
    if (j === jd) continue;
    let s = 0;
    for (let i = 1; i <= n; i++) s += simi[j][i] * dx[i];
    for (let i = 1; i <= n; i++) simi[j][i] -= s * simi[jd][i];
  }
}

/** Moves the vertex of least merit f + μ·violation into pole position; returns the error of simi as an inverse. */
export function bestToPole(n: number, mp: number, mpp: number, sim: Mat, simi: Mat, datmat: Mat, parmu: number): number {
  const np = n + 1;
  let phimin = datmat[mp][np] + parmu * datmat[mpp][np];
  let nbest = np;
  for (let j = 1; j <= n; j++) {
    const t = datmat[mp][j] + parmu * datmat[mpp][j];
    if (t < phimin) {
      nbest = j;
      phimin = t;
    } else if (t === phimin && parmu === 0 && datmat[mpp][j] < datmat[mpp][nbest]) nbest = j;
  }
  if (nbest <= n) {
    for (let i = 1; i <= mpp; i++) {
      const t = datmat[i][np];
      datmat[i][np] = datmat[i][nbest];
      datmat[i][nbest] = t;
    }
    for (let i = 1; i <= n; i++) {
      const t = sim[i][nbest];
      sim[i][nbest] = 0;
      sim[i][np] += t;
      let tempa = 0;
      for (let k = 1; k <= n; k++) {
        sim[i][k] -= t;
        tempa -= simi[k][i];
      }
      simi[nbest][i] = tempa;
    }
  }
  let error = 0;
  for (let i = 1; i <= n; i++) {
    for (let j = 1; j <= n; j++) {
      let t = i === j ? -1 : 0;
      for (let k = 1; k <= n; k++) t += simi[i][k] * sim[k][j];
      error = fmax(error, fabs(t));
    }
  }
  return error;
}

/** Gradients of the linear models: constraints in columns 1..m, minus the objective's in column m+1; con[k] ← −value at the pole. */
export function linearModels(n: number, mp: number, con: Float64Array, simi: Mat, datmat: Mat, a: Mat): void {
  const np = n + 1;
  const w = new F64(n + 1);
  for (let k = 1; k <= mp; k++) {
    con[k] = -datmat[k][np];
    for (let j = 1; j <= n; j++) w[j] = datmat[k][j] + con[k];
    for (let i = 1; i <= n; i++) {
      let t = 0;
      for (let j = 1; j <= n; j++) t += w[j] * simi[j][i];
      a[i][k] = k === mp ? -t : t;
    }
  }
}

/** σ_j (distance of vertex j from the opposite face) and η_j (edge length); 1 when the simplex is acceptable. */
export function simplexShape(n: number, sim: Mat, simi: Mat, vsig: Float64Array, veta: Float64Array, parsig: number, pareta: number): number {
  let iflag = 1;
  for (let j = 1; j <= n; j++) {
    let wsig = 0;
    let weta = 0;
    for (let i = 1; i <= n; i++) {
      wsig += simi[j][i] * simi[j][i];
      weta += sim[i][j] * sim[i][j];
    }
    vsig[j] = 1 / sqrt(wsig);
    veta[j] = sqrt(weta);
    if (vsig[j] < parsig || veta[j] > pareta) iflag = 0;
  }
  return iflag;
}

/** The penalty parameter after ρ is reduced (Powell's rule). */
export function reducedParmu(n: number, m: number, mp: number, datmat: Mat, parmu: number): number {
  const np = n + 1;
  let denom = 0;
  let cmin = 0;
  let cmax = 0;
  for (let k = 1; k <= mp; k++) {
    cmin = datmat[k][np];
    cmax = cmin;
    for (let i = 1; i <= n; i++) {
      cmin = fmin(cmin, datmat[k][i]);
      cmax = fmax(cmax, datmat[k][i]);
    }
    if (k <= m && cmin < 0.5 * cmax) {
      const t = fmax(cmax, 0) - cmin;
      denom = denom <= 0 ? t : fmin(denom, t);
    }
  }
  if (denom === 0) return 0;
  if (cmax - cmin < parmu * denom) return (cmax - cmin) / denom;
  return parmu;
}
