import type { CapabilityProfiler } from '../../gateway/ports/capability-profiler';
import { haveCpuModels } from './cpu-predictor';
import { profileAtDeploy } from './deploy-profile';
import { predictCpu } from './predict-cpu';

/**
 * The agent's `CapabilityProfiler` port: RaPP's deploy-time profile (`profileAtDeploy`), predicted
 * from the model's ONNX file where the CPU predictor's models ship and the agent names the file,
 * else measured.
 */
export const rappProfiler: CapabilityProfiler = {
  canPredict: haveCpuModels,
  profile: (io, { batches, quotas, sloMs }, model) =>
    profileAtDeploy({ ...io, predict: model ? (req) => predictCpu({ ...req, model }) : undefined }, batches, quotas, sloMs),
};
