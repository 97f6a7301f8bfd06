/**
 * The gateway's `TrainingScheduler` port (`gateway/ports/training-scheduler.ts`), implemented by
 * the registered training policies. Pure: the jobs API passes its state and clock in.
 */
import type { TrainingScheduler } from '../../gateway/ports/training-scheduler';
import { admit } from './admit';
import { forecast } from './forecast';
import { curveFromProfile } from './profile';
import { getPolicy } from './registry';

export const trainingScheduler: TrainingScheduler = {
  admit: (job, state, now, policy) => admit(job, state, now, policy),
  // a fresh policy instance per forecast: the round loop's own memory stays untouched
  forecast: (policy, state, now) => forecast(getPolicy(policy), state, now),
  curveFromProfile,
};
