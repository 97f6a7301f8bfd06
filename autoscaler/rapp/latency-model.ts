/**
 * A learned latency model (issue 12) as the autoscaler runs it: an ONNX graph, run with
 * onnxruntime-node, that maps feature rows [n, d] (float32) to ln(latency in ms) [n]. Training is
 * offline (bench/rapp/*.py with Debian's python3-torch); only this runs in the platform.
 * onnxruntime-node cannot run inside a test runner's VM sandbox (its output tensors fail a
 * cross-realm instanceof check), so tests run it in a child process.
 */
import * as ort from 'onnxruntime-node';

export class LatencyModel {
  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly input: string,
    private readonly output: string,
  ) {}

  /** Loads an exported model (one input, one output). Single-threaded: the autoscaler shares its node. */
  static async load(path: string): Promise<LatencyModel> {
    const session = await ort.InferenceSession.create(path, { intraOpNumThreads: 1, interOpNumThreads: 1 });
    if (session.inputNames.length !== 1 || session.outputNames.length !== 1) throw new Error(`${path}: a latency model has one input and one output, this ` +
      `has ${session.inputNames.length} and ${session.outputNames.length}`);
    return new LatencyModel(session, session.inputNames[0], session.outputNames[0]);
  }

  /** Latency in ms of each of `rows` feature rows (all of one width), in one run. */
  async predictMs(rows: readonly (readonly number[])[]): Promise<Float64Array> {
    if (rows.length === 0) return new Float64Array(0);
    const d = rows[0].length;
    const x = new Float32Array(rows.length * d);
    rows.forEach((r, i) => {
      if (r.length !== d) throw new Error(`feature row ${i} has ${r.length} values, row 0 has ${d}`);
      x.set(r, i * d);
    });
    const out = await this.session.run({ [this.input]: new ort.Tensor('float32', x, [rows.length, d]) });
    const y = out[this.output].data as ArrayLike<number>;
    return Float64Array.from({ length: rows.length }, (_, i) => Math.exp(y[i]));
  }
}
