/**
 * The `elasticflow` policy's admission and allocation: the authors' artifact's event
 * (`ef_sim_jobs_access_control`). Admission plans the event's deadline arrivals together with
 * every admitted job (`estimate_all_jobs`); if any plan misses its deadline, every arrival of the
 * event is declined — so while an admitted job is late, nothing is admitted. Allocation is
 * `artifactRound`. A late job keeps its place in deadline order.
 */
import { buddyPlacement } from '../../training/placement/buddy';
import { gpusAt } from '../../training/plan';
import type { AdmissionDecision, AdmissionPhase, AllocationPhase, Plan, PlanStep, RoundDecision, SchedulerState, Seconds, TrainingJob,
  TrainingPolicy } from '../../training/types';
import type { ArtifactPlan } from './plan';
import { artifactRound, estimateAll } from './round';
import { capacityOf } from '../../training/mlfaas/edf-pass';

function toPlan(jobId: string, p: ArtifactPlan, slot: Seconds): Plan {
  const steps: PlanStep[] = [...p.allocations.entries()].sort((a, b) => a[0] - b[0]).map(([from, gpus]) => ({ from, gpus }));
  return { jobId, slotSeconds: slot, steps, predictedCompletion: p.realEnd, reservedUntil: p.end };
}

export function admitEventArtifact(arrivals: readonly TrainingJob[], state: SchedulerState, now: Seconds): AdmissionDecision[] {
  const est = estimateAll([...state.jobs, ...arrivals], now, state.slotSeconds, capacityOf(state));
  if (est.ok) {
    return arrivals.map((j) => {
      const p = est.plans.get(j.id);
      const plan = p ? toPlan(j.id, p, state.slotSeconds) : { jobId: j.id, slotSeconds: state.slotSeconds, steps: [], predictedCompletion: now };
      return { admitted: true, plan,
        reason: `the event's ${arrivals.length} arrival(s) and every admitted job meet their deadlines (ElasticFlow artifact's estimate)` };
    });
  }
  const late = est.late[0];
  const own = arrivals.some((j) => j.id === late);
  const reason = own
    ? `job ${late} of the same arrival event cannot meet its deadline, so the whole event is declined (ElasticFlow artifact)`
    : `admitted job ${late} can no longer meet its deadline; the ElasticFlow artifact declines every arrival until it ends`;
  return arrivals.map(() => ({ admitted: false, reason, earliestFeasibleDeadline: null, ...(own ? {} : { wouldBreak: late }) }));
}

export const elasticFlowArtifactAdmission: AdmissionPhase = {
  admit: (job, state, now) => admitEventArtifact([job], state, now)[0],
  admitEvent: admitEventArtifact,
};

export function allocateArtifact(state: SchedulerState, now: Seconds): RoundDecision {
  const cap = capacityOf(state);
  const r = artifactRound(state.jobs, now, state.slotSeconds, cap);
  const gpus: Record<string, number> = {};
  const reasons: Record<string, string> = {};
  const plans: Record<string, Plan> = {};
  const late = new Set(r.late);
  let total = 0;
  for (const [id, g] of r.gpus) {
    gpus[id] = g;
    total += g;
    const plan = toPlan(id, r.plans.get(id)!, state.slotSeconds);
    plans[id] = plan;
    const share = gpusAt(plan, now);
    reasons[id] = late.has(id)
      ? `deadline no longer satisfiable: keeps its deadline priority with ${g} GPUs (ElasticFlow artifact)`
      : `plan ends ${Math.ceil(plan.predictedCompletion - now)} s from now with ${share} GPUs now`;
  }
  return { gpus, plans, reasons, reason: `elasticflow (artifact): ${r.gpus.size} jobs use ${total} of ${cap} GPUs`, nextDecisionAt: r.nextChange };
}

export const elasticFlowArtifactAllocation: AllocationPhase = { allocate: allocateArtifact };

/** The registered `elasticflow` policy: the authors' artifact, reproduced. */
export function elasticFlowArtifactPolicy(): TrainingPolicy {
  return {
    name: 'elasticflow',
    description:
      "ElasticFlow as its authors' artifact runs it: an event's arrivals admitted or declined together (all declined while an admitted job is late), the " +
        "artifact's minimum-satisfactory-share planner, left-over GPUs by marginal GPU time, buddy placement; the batch size never changes",
    elastic: true,
    elasticMaxGpus: true,
    adaptsBatch: false,
    admission: elasticFlowArtifactAdmission,
    allocation: elasticFlowArtifactAllocation,
    placement: buddyPlacement,
  };
}
