// @ts-check
'use strict';
/**
 * Gradient noise scale, the "simple" estimator of McCandlish et al., "An Empirical Model of
 * Large-Batch Training" (2018), appendix A.1. From gradients at one point in weight space taken
 * with a small batch B_small and a big batch B_big:
 *
 *   |G|^2 ≈ (B_big |G_big|^2 − B_small |G_small|^2) / (B_big − B_small)
 *   tr(Σ) ≈ (|G_small|^2 − |G_big|^2) / (1/B_small − 1/B_big)
 *   B_simple = tr(Σ) / |G|^2
 *
 * Here G_small are the k minibatch gradients of one pass (|G_small|^2 averaged over them) and
 * G_big is their mean, the gradient over all k·B_small examples ("full batch" when k covers
 * the training set). Both estimates are unbiased; their ratio is returned, or null when the
 * |G|^2 estimate is not positive (noise dominates) or there are fewer than two batches.
 */

/**
 * @param {{ sumSqNorms: number, count: number, batchSize: number, meanGrad: Float32Array | Float64Array }} pass
 *   sumSqNorms: the sum over the k minibatches of |g_i|^2; count: k; meanGrad: (1/k) Σ g_i
 * @returns {{ gnsSimple: number | null, gradSq: number, traceSigma: number, bSmall: number, bBig: number }}
 */
function gradientNoiseScale(pass) {
  const bSmall = pass.batchSize;
  const bBig = pass.batchSize * pass.count;
  const smallSq = pass.count ? pass.sumSqNorms / pass.count : 0;
  let bigSq = 0;
  for (let i = 0; i < pass.meanGrad.length; i++) bigSq += pass.meanGrad[i] * pass.meanGrad[i];
  if (pass.count < 2) return { gnsSimple: null, gradSq: NaN, traceSigma: NaN, bSmall, bBig };
  const gradSq = (bBig * bigSq - bSmall * smallSq) / (bBig - bSmall);
  const traceSigma = (smallSq - bigSq) / (1 / bSmall - 1 / bBig);
  return { gnsSimple: gradSq > 0 ? traceSigma / gradSq : null, gradSq, traceSigma, bSmall, bBig };
}

/**
 * One data-parallel step's contribution to the two-batch estimates, linear in its inputs so that
 * each worker can accumulate its own share and the shares simply add up (see worker.js):
 * smallSq is (a worker's share of) the mean over workers of |g_i|², bigSq (a worker's share of)
 * |G_big|², the all-reduced gradient's squared norm. With unequal local batches b_i, bSmall is
 * their harmonic mean k / Σ 1/b_i, for which E[mean_i |g_i|²] = |G|² + tr(Σ)/bSmall still holds.
 * @param {number} smallSq @param {number} bigSq @param {number} bSmall @param {number} bBig (> bSmall)
 * @returns {{ gradSq: number, traceSigma: number }}
 */
function twoBatchTerms(smallSq, bigSq, bSmall, bBig) {
  return {
    gradSq: (bBig * bigSq - bSmall * smallSq) / (bBig - bSmall),
    traceSigma: (smallSq - bigSq) / (1 / bSmall - 1 / bBig),
  };
}

/**
 * B_simple from estimates summed over steps: the ratio of the averages (McCandlish et al. average
 * |G|² and tr(Σ) separately, since the ratio of noisy estimates is biased); null when there are no
 * steps or the |G|² average is not positive.
 * @param {{ gradSqSum: number, traceSum: number, steps: number }} sums
 * @returns {number | null}
 */
function noiseScaleFromSums(sums) {
  if (sums.steps < 1 || !(sums.gradSqSum > 0)) return null;
  return sums.traceSum / sums.gradSqSum;
}

/**
 * Statistical efficiency of global batch M relative to base batch M0, FaPES §4.3 (after Pollux):
 * (φ + M0) / (φ + M), φ the gradient noise scale: the progress per example at M as a fraction of
 * the progress per example at M0. Null when φ is unknown.
 * @param {number | null} phi @param {number} m @param {number} m0
 * @returns {number | null}
 */
function statisticalEfficiency(phi, m, m0) {
  if (phi === null || !Number.isFinite(phi) || phi < 0) return null;
  return (phi + m0) / (phi + m);
}

module.exports = { gradientNoiseScale, twoBatchTerms, noiseScaleFromSums, statisticalEfficiency };
