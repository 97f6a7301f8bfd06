// kalmanjs ships no types. Its naming is the reverse of the usual one: R is the process noise and
// Q the measurement noise (see node_modules/kalmanjs/lib/kalman.js).
declare module 'kalmanjs' {
  export default class KalmanFilter {
    constructor(options?: { R?: number; Q?: number; A?: number; B?: number; C?: number });
    R: number;
    Q: number;
    A: number;
    B: number;
    C: number;
    /** Posterior covariance after the last `filter`. */
    cov: number;
    /** Posterior estimate after the last `filter`. */
    x: number;
    filter(z: number, u?: number): number;
    predict(u?: number): number;
    /** Predicted covariance A·cov·A + R. */
    uncertainty(): number;
    lastMeasurement(): number;
  }
}
