/** FIFO, SJF, EDF and EDF with ElasticFlow's admission control. */
import { mlfaasAdmission } from '../mlfaas/admission';
import { buddyPlacement } from '../placement/buddy';
import { secondsToFinish } from '../curve';
import type { TrainingPolicy } from '../types';
import { active, capacityOf, elasticInOrder, gangInOrder, gangSize } from './ordered-allocation';

const bySubmit = (a: { submitTime: number; id: string }, b: { submitTime: number; id: string }) =>
  a.submitTime - b.submitTime || (a.id < b.id ? -1 : 1);

export const fifo: TrainingPolicy = {
  name: 'fifo',
  description: 'first in, first out; gang-scheduled at the requested GPUs; the head of the queue blocks the rest',
  elastic: false,
  placement: buddyPlacement,
  allocation: {
    allocate: (state) => gangInOrder('fifo', active(state).sort(bySubmit), state, false, () => 'fifo'),
  },
};

export const sjf: TrainingPolicy = {
  name: 'sjf',
  description: 'shortest remaining time first at the requested GPUs; gang-scheduled with backfill',
  elastic: false,
  placement: buddyPlacement,
  allocation: {
    allocate: (state) => {
      const cap = capacityOf(state);
      const order = active(state).sort(
        (a, b) => secondsToFinish(a, gangSize(a, cap)) - secondsToFinish(b, gangSize(b, cap)) || bySubmit(a, b),
      );
      return gangInOrder('sjf', order, state, true, (j) => `remaining ${Math.round(secondsToFinish(j, gangSize(j, cap)))} s`);
    },
  },
};

const edfOrder = (state: Parameters<typeof active>[0]) =>
  active(state).sort((a, b) => (a.deadline ?? Infinity) - (b.deadline ?? Infinity) || bySubmit(a, b));

export const edf: TrainingPolicy = {
  name: 'edf',
  description: 'earliest deadline first, elastic: each job in deadline order takes up to its max GPUs; no admission control',
  elastic: true,
  placement: buddyPlacement,
  allocation: { allocate: (state) => elasticInOrder('edf', edfOrder(state), state) },
};

export const edfAdmission: TrainingPolicy = {
  name: 'edf-admission',
  description: 'EDF allocation with ElasticFlow admission control (the paper\'s Fig. 9 ablation)',
  elastic: true,
  admission: mlfaasAdmission(),
  placement: buddyPlacement,
  allocation: { allocate: (state) => elasticInOrder('edf-admission', edfOrder(state), state) },
};
