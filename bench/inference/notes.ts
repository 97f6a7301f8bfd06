// The notes bench/inference-bench.ts writes into bench/results/inference.md after its header: how the
// comparison is set up and what was checked. Kept here so the bench's own file stays about running it.

export const NOTES = `How the comparison is set up (and what was checked):

- **The headline follows the mechanism** (issue 22, item 6; \`MECHANISM\` in \`bench/inference/run.ts\`). Per GPU replica the platform ` +
  `enforces a time quota (the native limiter + tokend, changed live) and an SM share (MPS's active-thread percentage, fixed for the ` +
  `replica's life); the largest batch is set per function (MAX_BATCH_SIZE, the runtime batches dynamically up to it). The simulator holds ` +
  `an SM share fixed: a decision only sets quotas, adds and removes replicas, so a policy that wants another share starts a new replica and ` +
  `pays its cold start (nothing is resized in place; the live provider actuates it the same way). **Quotas**: tokend meters a GPU's ` +
  `replicas against one window of device time per GPU. Under MPS (the default enforced dimensions, spatial+temporal) it does so in ` +
  `SM-share-weighted units, HAS-GPU's occupancy measure: the limiter charges a replica started at SM share s device time × s, its quota q ` +
  `becomes request = limit = q·s, and tokend scales a device's grants down together only when the busy replicas' Σ s·q exceeds 1 ` +
  `(\`quotaScope: 'occupancy'\`: a batch runs at q·min(1, 1 / Σ_busy s·q), the scale fixed when it starts). Without MPS ` +
  `(BENCH_ENFORCED=temporal or none: every share 1, pure time-slicing) it is plain device time, Σ q ≤ 1 per GPU (\`'device'\`). The ` +
  `policies plan per SM row (\`autoscaler/inference/cluster.ts\`: Σ quota ≤ 1 within a row, Σ share ≤ 1 over a device's rows), which ` +
  `implies Σ s·q ≤ 1 per device, so under occupancy accounting their plans are never scaled down and the headline should equal the ` +
  `per-SM-row one (\`'slot'\`, HAS-GPU's FaST-GShare). Under plain device-time accounting (\`BENCH_QUOTA_SCOPE=device\`, the platform ` +
  `before SM-weighted accounting, and without MPS) the hybrid packs replicas on small SM partitions at quotas up to 1, so some of its ` +
  `batches start on a device whose busy replicas' Σ q exceeds 1 and get a fraction of the device's time, and the SLO guard adds replicas ` +
  `into the same oversubscription. **Batches**: every replica batches up to its function's maxBatchSize (4), as the runtime does, not the ` +
  `batch its placement was planned with (static-share plans batch 1). Each of these accountings and batchings alone, with its headline and ` +
  `the share of batches started over Σ q > 1 and Σ s·q > 1, is measured by \`npx tsx bench/inference/mechanism.ts\` → ` +
  `\`bench/results/inference-mechanism.md\`, not by this run. The latency-vs-share model itself is checked against the H100 grid in ` +
  `\`bench/results/gpu-model-check.md\` (\`npx tsx bench/gpu-grid-check.ts\`).

- **Cost** (since issue 11) = device-seconds × $2.48/h: every V100 that any replica is placed on (starting, serving, or finishing its last ` +
  `batch after removal) is billed whole, by the second, because that is the granularity a cloud sells a V100 at (no MIG on a V100). Each ` +
  `suite's functions are deployed on one cluster, so replicas of different functions can share a device and fractional shares save money ` +
  `only as far as they pack. The share cost HAS-GPU charges (Sec. 4.3, "the actual GPU resources and time consumed": GPU-seconds × SM share ` +
  `× quota) is printed beside it: it is what perfect packing would bill. A KPA replica holds a whole device from its creation, cold start ` +
  `included, until it is removed, so its two costs agree.
- **SM partitions per device**: 48 (MPS's client limit; \`MAX_SM_PARTITIONS\`) for every fractional policy; HAS-GPU's controller keeps 2 ` +
  `rows per GPU (\`hybrid-2rows\` is our hybrid with that limit), which under per-device billing leaves most of a device's SMs idle behind two small partitions.
- **KPA** is KServe as HAS-GPU ran it (validation/kserve/yaml): minReplicas 1 (no scale to zero), maxReplicas 2, scaleTarget 1 concurrent ` +
  `request with Knative's 70 % target utilisation, stable 60 s / panic 6 s at 2× ready, max scale-down rate 2, batch 4, one exclusive GPU ` +
  `per replica. Concurrency is the simulator's time-averaged requests in the system per second (what Knative's queue-proxy reports), not a ` +
  `point sample at the second's end. maxReplicas 2 applies to the HAS-GPU suite; elsewhere KPA may use the function's maxScale.
- **static-share** (FaST-GShare-like) gives each function the share FaST-GShare's profiler would: the most batch-1 throughput per resource ` +
  `(s·q, profile SM grid, quota steps of 0.1) whose batch-1 latency is at most headroom × SLO, the headroom tuned on the tuning set (table ` +
  `below); horizontal scaling only, sized ⌈R/(0.9 · capability)⌉ on the last observed rate. Until 2026-11-24 it took the smallest share ` +
  `whose batch-1 latency just met the SLO, which left no room for queueing (a baseline sized to fail). **static-share-hasgpu** is the share ` +
  `HAS-GPU's FaST-GShare YAMLs used for every model (SM 30 % / quota 0.5). dilu-horizontal takes the share Dilu's profiler picks ` +
  `(\`autoscaler/reproductions/dilu/horizontal.ts\`).
- **The simulator wraps the live decider** (\`autoscaler/live/decider.ts\`): every policy runs with the live loop's rules around it, and ` +
  `the hybrid with the live SLO guard (misses beyond chance over 5 s while the model says the replicas serve the load: +quota or +1 ` +
  `replica, kept 11 s; baselines run without it, as published). \`BENCH_SLO_GUARD_S=1e9\` runs the hybrid without it; the guard counts ` +
  `misses from the gateway's latency histogram buckets (1, 2, 5, 10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200, 300, 500 ms…).
- **hybrid** (default \`sloModel: shared\`) is Algorithm 1 with an SLO-aware capability: the function's replicas as ONE FIFO queue with ` +
  `dynamic batching (the simulator's and the gateway's), at the function's own percentile (p99, no tuned percentile): p-th percentile ` +
  `latency = slowest partial-batch latency + ½ M/M/c wait (Faro's M/D/c), the probability of waiting from the unbatched (batch-1) load, the ` +
  `queue draining at the full-batch rate. Algorithm 1 raises quotas (most SMs first) and adds the cheapest replica(s) until that latency ` +
  `meets the SLO at R/α; on a used GPU, the cheapest SM-aligned option. Hysteresis (ours): a scale-down (at R < β·C) keeps a fleet that ` +
  `fits R/0.6 (\`downUtil\`, (α+β)/2), not R/α, and removals wait the 10 s cool-down after a scale-up — without it a fleet left at the α ` +
  `trigger was re-grown the next tick (the Faro trace's add/remove churn). Bridge release (ours, \`bridgeTrim\`): when a cold-started ` +
  `replica becomes ready, the fleet's quotas step down (no removals) to what fits R/0.6, instead of holding until R < β·C — the share ` +
  `raised to carry a burst through the cold start is given back once the burst has passed. A cold-start lead (\`leadS\`: provision for R + ` +
  `trend·lead) is implemented but off (the per-second least-squares trend over 60 s over-provisions).
- **hybrid-mdc** is the earlier default (\`sloModel: mdc\`): per-replica M/D/1 at the tuned model percentile p93 (table below), and on a ` +
  `used GPU the cheapest SM-aligned option covering the gap (the printed algorithm takes the largest free SM partition: \`usedGpuConfig: smax\`).
- **How cost_ratio_vs_kpa is aggregated.** Pooled: KPA's device cost ÷ ours over a whole cluster (the standard workload's 15 functions on ` +
  `the tuning set; the reporting set's 30 functions per seed). HAS-GPU does not say how its 10.8× is aggregated (abstract: "an average of ` +
  `10.8x"; Sec. 4.3 on Fig. 7, per-model costs per 1K requests: "up to 10.8x"), and it bills s·q: its figure is a share-cost ratio, printed ` +
  `beside ours. Under per-device billing the ceiling is set by packing: at 5-15 req/s KPA holds one to two exclusive GPUs per function, ` +
  `while the configurations whose batch-1 latency meets 1.5-2.5× the full-GPU latency take 0.015-0.08 of a GPU's s·q but their SM partition ` +
  `(s) for all of the time, so a device holds only as many replicas as their partitions fit.`;
