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

module.exports = { gradientNoiseScale };
