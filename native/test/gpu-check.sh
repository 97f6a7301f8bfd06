#!/usr/bin/env bash
# The limiter's check on a real NVIDIA GPU. Self-contained: bash, make + gcc (+ nvcc for the
# cudart programs), python3 with torch where present; no Node.js. Details: native/test/gpu/README.md.
#
#   native/test/gpu-check.sh                 on a GPU machine (about 3-4 min on an H100)
#   GPU_CHECK_DRY=1 native/test/gpu-check.sh builds the helpers and runs the non-MPS, non-torch
#                                            parts on the stub driver (CI; numbers mean nothing)
# Environment: GPU_CHECK_RUN_S (seconds per share run, 3; dry 0.6), GPU_CHECK_TORCH_S (3),
# GPU_CHECK_QUICK=1 (every timed run 0.6 s, as in a dry run: for tests of the script itself),
# GPU_CHECK_PYTHON (default /opt/torch/.venv/bin/python3, else python3), GPU_CHECK_BUDGET_S
# (360: sections that would start later are skipped), GPU_CHECK_LOGS (copy the run's files there),
# GPU_CHECK_KEEP=1 (keep the temp dir).
#
# Measures: the limiter's cost per launch call; used shares of 1 ms kernels alone, two processes
# time-sliced and two under MPS; the reaction to a quota change; swapped/unswapped driver entry
# points in CUDA 13 runtime programs; MPS spatial scaling; resnet50 throughput at quotas 1.0 /
# 0.5 / 0.25 and two replicas at 0.3 / 0.7 under MPS against the GPU's busy fraction without
# the limiter. Ends with one line:
#   gpu: launch_overhead_ns=<a> share_error_pct=<b> torch_q025=<c> torch_q050=<d> torch_q100=<e> unswapped=<f>
# Exit: 0 measured and every target met (dry run: measured); 1 a target missed or not measured;
# 2 the build failed. No GPU (no dry run): says so and exits 0.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NATIVE=$ROOT/native
HELP=$NATIVE/test/gpu
B=$NATIVE/build
DRY=${GPU_CHECK_DRY:-0}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}

if [ "$DRY" != 1 ]; then
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "gpu: no GPU (nvidia-smi not found); nothing measured"; exit 0
  fi
  if ! gpus=$(timeout 30 nvidia-smi -L 2>&1) || ! printf '%s\n' "$gpus" | grep -q '^GPU '; then
    echo "gpu: no GPU (nvidia-smi -L: $(printf '%s' "$gpus" | head -n1)); nothing measured"; exit 0
  fi
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
BIN=$T/bin
mkdir -p "$BIN"
# shellcheck source=native/test/gpu/lib.sh
. "$HELP/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$DRY" = 1 ]; then
  RUN_S=${GPU_CHECK_RUN_S:-0.6}; ALONE_S=0.6; LAUNCHES=20480; REACT_S=1.6; COMPUTE_S=0.6
  CUENV=(LD_LIBRARY_PATH="$B/stub")   # every CUDA program runs on the stub driver
  say "DRY RUN on the stub driver ($B/stub): the numbers below are not GPU measurements"
else
  RUN_S=${GPU_CHECK_RUN_S:-3}; ALONE_S=2; LAUNCHES=200192; REACT_S=3; COMPUTE_S=1.5
  CUENV=(GPU_CHECK=1)                 # nothing to add (an empty array trips set -u on old bash)
  say "$(timeout 30 nvidia-smi --query-gpu=name,driver_version,compute_mode,mig.mode.current --format=csv,noheader | head -n1)"
fi
if [ -n "${GPU_CHECK_QUICK:-}" ]; then RUN_S=0.6; ALONE_S=0.6; LAUNCHES=20480; REACT_S=1.6; COMPUTE_S=0.6; fi
TORCH_S=${GPU_CHECK_TORCH_S:-3}
BUDGET_S=${GPU_CHECK_BUDGET_S:-360}
in_budget() { [ "$SECONDS" -lt "$BUDGET_S" ] || { say "$1: skipped (past the ${BUDGET_S} s budget)"; return 1; }; }
SHARE_ERRS=()
UNSWAP_RUNS=()   # limiter stats files (names) whose unswapped= counts go into the summary
OVERHEAD=na; TQ025=na; TQ050=na; TQ100=na

# ---- build: tokend, liblimiter.so, the stub, the cudart programs (make), the helpers (gcc) ----
# Only the targets this check uses, with -k: a broken test program elsewhere does not stop it.
need=(build/tokend build/liblimiter.so build/stub/libcuda.so.1)
want=()
if command -v nvcc >/dev/null || [ -x "$CUDA_HOME/bin/nvcc" ]; then want=(build/prog_cudart_static build/prog_cudart_shared)
else say "no nvcc: the cudart programs are not built"; fi
say "building (make -C native ${need[*]} ${want[*]}; helpers into $BIN)"
mkdir -p "$B"
lock=(); command -v flock >/dev/null && lock=(flock "$B/.make.lock")   # the jest suites' lock
"${lock[@]}" make -k -s -j"$(nproc 2>/dev/null || echo 2)" -C "$NATIVE" "${need[@]}" "${want[@]}" >"$T/make.log" 2>&1
for f in "${need[@]}"; do
  [ -f "$NATIVE/$f" ] && continue
  tail -n 20 "$T/make.log"
  echo "gpu: build failed ($f; make -C native); nothing measured"; exit 2
done
for f in "${want[@]}"; do [ -x "$NATIVE/$f" ] || { tail -n 5 "$T/make.log"; say "$f did not build"; }; done
CC=${CC:-gcc}; command -v "$CC" >/dev/null || CC=cc
# the probe links against libcuda.so.1: the test stub in a dry run, else the driver itself (or
# the toolkit's link stub); at run time the loader finds the real driver (or CUENV's stub)
if [ "$DRY" = 1 ]; then cudalib=$B/stub/libcuda.so.1
else
  cudalib=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF; exit}')
  [ -n "$cudalib" ] || cudalib=$(ls "$CUDA_HOME"/lib64/stubs/libcuda.so "$CUDA_HOME"/targets/*/lib/stubs/libcuda.so 2>/dev/null | head -n1)
  [ -n "$cudalib" ] || cudalib=$B/stub/libcuda.so.1
fi
if ! "$CC" -O2 -Wall -Wextra -o "$BIN/tlctl" "$HELP/tlctl.c" 2>"$T/cc.log" ||
   ! "$CC" -O2 -Wall -Wextra -I"$CUDA_HOME/include" -o "$BIN/probe" "$HELP/probe.c" "$cudalib" 2>>"$T/cc.log"; then
  cat "$T/cc.log"
  echo "gpu: build failed (helpers, $CC); nothing measured"; exit 2
fi
say "helpers built: tlctl, probe (linked against $cudalib)"

"$B/tokend" --socket "$T/s" --control "$T/c" --window-ms 20 --gpus 1 2>"$T/tokend.log" &
TOKEND=$!
for _ in $(seq 100); do [ -S "$T/c" ] && break; sleep 0.05; done
[ -S "$T/c" ] || { cat "$T/tokend.log"; echo "gpu: tokend did not start; nothing measured"; exit 1; }

# ---- 1. the limiter's cost per launch call (host side: bursts of 256, synchronize between) ----
# "with": the default configuration (each kernel's cost learnt from CUDA events around a sample of
# its launches, behind the sample gate); "ungated": the same with TL_GATE=0 (the 2026-11-27 H100
# run's meter: the samples then included the launch call, and the empty kernels were throttled to
# it); "fixed": TL_NS_PER_BLOCK=1, no events.
if in_budget launch; then
  base=(); with=(); fixed=(); ungated=()
  for i in 1 2 3; do  # interleaved, so a drifting host affects both alike
    base+=("$(timeout 120 env "${CUENV[@]}" STUB_KERNEL_US=1 "$BIN/probe" --mode empty --count $LAUNCHES | tee -a "$T/launch.json" | jget /dev/stdin perLaunchNs)")
    # shellcheck disable=SC2046
    with+=("$(timeout 120 env "${CUENV[@]}" STUB_KERNEL_US=1 $(lim launch$i) "$BIN/probe" --mode empty --count $LAUNCHES | tee -a "$T/launch.json" | jget /dev/stdin perLaunchNs)")
    # shellcheck disable=SC2046
    fixed+=("$(timeout 120 env "${CUENV[@]}" STUB_KERNEL_US=1 TL_NS_PER_BLOCK=1 $(lim launchf$i) "$BIN/probe" --mode empty --count $LAUNCHES | tee -a "$T/launch.json" | jget /dev/stdin perLaunchNs)")
    # shellcheck disable=SC2046
    ungated+=("$(timeout 120 env "${CUENV[@]}" STUB_KERNEL_US=1 TL_GATE=0 $(lim launchu$i) "$BIN/probe" --mode empty --count $LAUNCHES | tee -a "$T/launch.json" | jget /dev/stdin perLaunchNs)")
  done
  b=$(printf '%s\n' "${base[@]}" | median3); w=$(printf '%s\n' "${with[@]}" | median3); f=$(printf '%s\n' "${fixed[@]}" | median3)
  u=$(printf '%s\n' "${ungated[@]}" | median3)
  OVERHEAD=$(calc "$w - $b" "%.1f")
  say "launch: ${b:-na} ns per call without the limiter, ${w:-na} ns with it (medians of 3 x $LAUNCHES): overhead $OVERHEAD ns; with a fixed cost (no events) ${f:-na} ns; samples ungated (TL_GATE=0) ${u:-na} ns"
  for n in launch2 launchu2; do say "  $n limiter: $(stats_brief $n)"; done
  # what CUDA events measure on this device (the meter's yardstick): min / median ns
  ev=$(timeout 60 env "${CUENV[@]}" STUB_KERNEL_US=1 "$BIN/probe" --mode events --count 200 | tee "$T/events.json")
  say "events: pair $(jget /dev/stdin pairMinNs <<<"$ev") / $(jget /dev/stdin pairMedNs <<<"$ev") ns, empty kernel between them $(jget /dev/stdin oneMinNs <<<"$ev") / $(jget /dev/stdin oneMedNs <<<"$ev"), per kernel of 64 pipelined $(jget /dev/stdin pipelinedMinNs <<<"$ev") / $(jget /dev/stdin pipelinedMedNs <<<"$ev"), on an idle stream (launch call in it) $(jget /dev/stdin idleMinNs <<<"$ev") / $(jget /dev/stdin idleMedNs <<<"$ev")"
fi

# ---- 2. shares of 1 ms spin kernels (window 20 ms), each process alone on the GPU first ----
if in_budget shares; then
  share_run alone_q100 "$ALONE_S" 1.0; SHARE_ERRS=()   # reference only: quota 1.0 is not a share to hold
  share_run alone_q050 "$RUN_S" 0.5
  share_run timesliced "$RUN_S" 0.3 0.7
fi

# ---- 3. reaction: limit 1.0 -> 0.2 in the middle of a run ----
if in_budget reaction; then
  # shellcheck disable=SC2046
  spawn react $((${REACT_S%.*} + 60)) env "${CUENV[@]}" STUB_KERNEL_US=1000 $(lim react) \
    "$BIN/probe" --mode spin --seconds "$REACT_S" --kernel-us 1000 --trace "$T/react.trace"
  p=$SPAWNED
  quota "$p" 1 1 >/dev/null
  sleep "$(calc "$REACT_S / 2" "%.2f")"
  tc=$(quota "$p" 0.2 0.2 | sed -n 's/.*"monoNs":\([0-9]*\).*/\1/p')
  wait "$p"
  # 20 ms bins from the change (tokend's CLOCK_MONOTONIC); at 0.2 a window holds 4 kernels
  say "reaction 1.0->0.2: $(awk -v tc="${tc:-0}" -v thr=6 '
    { t = $1 - tc; if (t < 0) { if (t >= -5e8) before++ } else { b = int(t / 2e7); n[b]++; if (b > last) last = b; if (t >= 2e8) after++; end = t } }
    END {
      for (b = 0; b < last; b++) if (n[b] > thr) r = (b + 1) * 20   # the last bin still above 1.5 x the new rate
      printf "%.1f kernels per 20 ms before, %d in the first 20 ms after, %.1f per 20 ms from 200 ms on; reaction_ms=%d (every 20 ms bin from then on <= %d)",
        before / 25, n[0], (end > 2e8 ? after / ((end - 2e8) / 2e7) : 0), r, thr }' "$T/react.trace" 2>/dev/null)"
fi

# ---- 3b. lending (Dilu's <request, limit>, tokend's RCKM): A at request 0.3 / limit 1.0 alone, then B at
# 0.7 / 0.7 beside it. Alone A may borrow up to its limit; once B is busy each gets its request. Reported, not a target.
if in_budget lending; then
  LEND_S=$(calc "$RUN_S" "%.1f")
  # shellcheck disable=SC2046
  spawn lendA $((${RUN_S%.*} * 2 + 60)) env "${CUENV[@]}" STUB_KERNEL_US=1000 $(lim lendA) \
    "$BIN/probe" --mode spin --seconds "$(calc "$LEND_S * 2 + 0.5" "%.1f")" --kernel-us 1000 --trace "$T/lendA.trace"
  pa=$SPAWNED
  quota "$pa" 0.3 1.0 >/dev/null
  sleep "$LEND_S"
  # shellcheck disable=SC2046
  spawn lendB $((${RUN_S%.*} + 60)) env "${CUENV[@]}" STUB_KERNEL_US=1000 $(lim lendB) \
    "$BIN/probe" --mode spin --seconds "$LEND_S" --kernel-us 1000 --trace "$T/lendB.trace"
  pb=$SPAWNED
  quota "$pb" 0.7 0.7 >/dev/null
  wait "$pa" "$pb" 2>/dev/null
  # B's busy window [its 20th kernel, its last] on the shared CLOCK_MONOTONIC; A's kernels before B's first and inside the window
  say "lending: $(awk '
    FNR == 1 { f++ }
    f == 1 { a[++na] = $1 }
    f == 2 { b[++nb] = $1 }
    END {
      if (na < 50 || nb < 40) { printf "na (A %d kernels, B %d)", na, nb; exit }
      b0 = b[20]; b1 = b[nb]; w = (b1 - b0) / 1e9
      for (i = 1; i <= na; i++) { if (a[i] < b[1] && a[i] >= a[1] + 2e8) { alone++; if (!s0) s0 = a[i]; s1 = a[i] } if (a[i] > b0 && a[i] <= b1) both++ }
      aw = (s1 - s0) / 1e9
      printf "A (request 0.3, limit 1.0) alone used %.3f; beside B (0.7 / 0.7) A used %.3f, B %.3f", (aw > 0 ? alone / 1000 / aw : 0), both / 1000 / w, (nb - 20) / 1000 / w
    }' "$T/lendA.trace" "$T/lendB.trace" 2>/dev/null)"
  for n in lendA lendB; do say "  $n limiter: $(stats_brief $n)"; done
fi

# ---- 4. CUDA 13 runtime programs (nvcc, -cudart static and shared) under the limiter at 0.5 ----
for v in static shared; do
  prog=$B/prog_cudart_$v
  [ -x "$prog" ] || { say "cudart $v: skipped (no $prog: make cuda-progs needs nvcc)"; continue; }
  in_budget "cudart $v" || continue
  # shellcheck disable=SC2046
  spawn cudart_$v 60 env "${CUENV[@]}" $(lim cudart_$v) "$prog" --seconds 2 --kernel-us 1000
  quota "$SPAWNED" 0.5 0.5 >/dev/null
  wait "$SPAWNED"
  UNSWAP_RUNS+=("cudart_$v")
  j=$T/cudart_$v.json
  say "cudart $v: init $(sed -n 's/.*"init":"\([a-z]*\)".*/\1/p' "$j"), used $(calc "$(jget "$j" busyNs) / $(jget "$j" elapsedNs)" "%.3f") at quota 0.5; $(stats_brief cudart_$v)"
  grep -h 'unswapped' "$T/cudart_$v.log" 2>/dev/null | head -n3 | sed 's/^/    /'
done

# ---- 5. PyTorch alone (no MPS): unlimited with its GPU busy fraction, then quotas ----
PY=${GPU_CHECK_PYTHON:-}
[ -n "$PY" ] || { [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3; } || PY=python3
TORCH=; U=na; BUSY=na
# expect IPS QUOTA: the throughput a quota should give, unlimited x min(1, quota / busy fraction)
expect() { calc "$U * (($1 / $BUSY) < 1 ? ($1 / $BUSY) : 1)" "%.1f"; }
ratio() { calc "$1 / $(expect "$2")" "%.3f"; }   # torch_qX: measured / expected
if [ "$DRY" = 1 ]; then say "torch: skipped (dry run)"
elif ! tv=$(timeout 90 "$PY" -c 'import torch; assert torch.cuda.is_available(); print(torch.__version__, torch.version.cuda)' 2>&1); then
  say "torch: skipped ($PY: $(printf '%s' "$tv" | tail -n1))"
elif in_budget torch; then
  TORCH=1
  say "torch $tv ($PY): resnet50 fp16 batch 8, forward + synchronize per request, ${TORCH_S} s per phase"
  timeout 120 "$PY" "$HELP/torchbench.py" --busy --kernels "$T/torch_kernels.json" --seconds "$TORCH_S" >"$T/torch_free.json" 2>"$T/torch_free.err"
  U=$(grep '"phase": "unlimited"' "$T/torch_free.json" | jget /dev/stdin ips)
  BUSY=$(grep '"busy"' "$T/torch_free.json" | jget /dev/stdin busy)
  [ "$(calc "$BUSY > 0" "%d")" = 1 ] || BUSY=na   # no kernel time seen: no expectation
  say "torch unlimited: $U img/s; GPU busy fraction $BUSY ($(grep '"busy"' "$T/torch_free.json" | sed 's/^{//; s/}$//; s/"//g'))"
  [ "$U" != na ] || tail -n 5 "$T/torch_free.err"
  # shellcheck disable=SC2046
  timeout 150 env TL_COSTS_FILE="$T/torch_alone.costs" $(lim torch_alone) "$PY" "$HELP/torchbench.py" --quotas 1.0,0.5,0.25 --seconds "$TORCH_S" \
    --tlctl "$BIN/tlctl" --control "$T/c" >"$T/torch_alone.json" 2>"$T/torch_alone.err"
  UNSWAP_RUNS+=(torch_alone)
  for q in 1.0 0.5 0.25; do
    ips=$(grep "\"phase\": \"q$q\"" "$T/torch_alone.json" | jget /dev/stdin ips)
    r=$(ratio "$ips" "$q")
    case $q in 1.0) TQ100=$r ;; 0.5) TQ050=$r ;; 0.25) TQ025=$r ;; esac
    say "torch q=$q: $ips img/s, expected $(expect "$q"): ratio $r"
  done
  [ "$TQ025" != na ] || tail -n 5 "$T/torch_alone.err"
  say "  torch_alone limiter: $(stats_brief torch_alone)"
  if [ -s "$T/torch_alone.costs" ] && [ -s "$T/torch_kernels.json" ]; then   # diagnostics: the meter vs CUPTI
    say "  meter vs CUPTI (per request): $(timeout 60 python3 "$HELP/costs.py" "$T/torch_alone.costs" "$T/torch_kernels.json" 2>&1 | head -c 2000)"
  fi
  # diagnostics (not in the summary): the hooks alone (no tokend: nothing charged, nothing waits),
  # and quota 0.25 with ungated samples (TL_GATE=0: the meter of the 2026-11-27 run)
  if in_budget "torch diagnostics"; then
    # shellcheck disable=SC2046
    timeout 120 env TL_COSTS_FILE="$T/torch_hooks.costs" $(lim torch_hooks | sed 's/TL_TOKEND_SOCKET=[^ ]*//') "$PY" "$HELP/torchbench.py" --seconds "$TORCH_S" \
      >"$T/torch_hooks.json" 2>"$T/torch_hooks.err"
    ips=$(grep '"phase": "unlimited"' "$T/torch_hooks.json" | jget /dev/stdin ips)
    say "torch hooks only (preloaded, no tokend): $ips img/s, $(calc "$ips / $U" "%.3f") of unlimited; $(stats_brief torch_hooks)"
    # shellcheck disable=SC2046
    timeout 150 env TL_GATE=0 $(lim torch_ungated) "$PY" "$HELP/torchbench.py" --quotas 0.25 --seconds "$TORCH_S" \
      --tlctl "$BIN/tlctl" --control "$T/c" >"$T/torch_ungated.json" 2>"$T/torch_ungated.err"
    ips=$(grep '"phase": "q0.25"' "$T/torch_ungated.json" | jget /dev/stdin ips)
    say "torch q=0.25 with ungated samples: $ips img/s, ratio $(ratio "$ips" 0.25); $(stats_brief torch_ungated)"
  fi
fi

# ---- 6. under MPS: spatial scaling, shares of 1 ms kernels, two torch replicas ----
if [ "$DRY" = 1 ]; then say "mps: skipped (dry run)"
elif ! command -v nvidia-cuda-mps-control >/dev/null; then say "mps: skipped (no nvidia-cuda-mps-control)"
elif in_budget mps; then
  export CUDA_MPS_PIPE_DIRECTORY=$T/mps CUDA_MPS_LOG_DIRECTORY=$T/mpslog
  mkdir -p "$T/mps" "$T/mpslog"
  if timeout 20 nvidia-cuda-mps-control -d </dev/null >"$T/mps-control.out" 2>&1; then
    MPS_ON=1
    sleep 0.5
    # The grid is fixed at 8 blocks per SM of the whole device (the 100 % run's count): under MPS a
    # client's MULTIPROCESSOR_COUNT attribute reports only its share of SMs, so a grid sized from it
    # shrinks with the share and the kernel time cannot show the share (runs 1-5 printed x1.00).
    comp() { timeout 60 env CUDA_MPS_ACTIVE_THREAD_PERCENTAGE="$1" "$BIN/probe" --mode compute --seconds "$COMPUTE_S" ${2:+--blocks "$2"} >"$T/mps_compute_$1.json"; jget "$T/mps_compute_$1.json" meanKernelUs; }
    t100=$(comp 100); sms100=$(jget "$T/mps_compute_100.json" sms); grid=$(jget "$T/mps_compute_100.json" blocks)
    [ "$grid" = na ] && grid=
    t50=$(comp 50 "$grid"); t25=$(comp 25 "$grid")
    CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 timeout 60 "$BIN/probe" --mode compute --seconds "$COMPUTE_S" ${grid:+--blocks "$grid"} >"$T/mps_c1.json" & c1=$!
    CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 timeout 60 "$BIN/probe" --mode compute --seconds "$COMPUTE_S" ${grid:+--blocks "$grid"} >"$T/mps_c2.json" & c2=$!
    wait "$c1" "$c2"
    say "mps spatial (compute kernel, ${grid:-na} blocks = 8 per SM of $sms100): $(calc "${t100:-na} / 1000" "%.1f") ms at 100 %, $(calc "${t50:-na} / 1000" "%.1f") ms at 50 % (x$(calc "${t50:-na} / ${t100:-na}" "%.2f"), ideal 2), $(calc "${t25:-na} / 1000" "%.1f") ms at 25 % (x$(calc "${t25:-na} / ${t100:-na}" "%.2f"), ideal 4); two clients at 50 % together: $(calc "$(jget "$T/mps_c1.json" meanKernelUs) / 1000" "%.1f") / $(calc "$(jget "$T/mps_c2.json" meanKernelUs) / 1000" "%.1f") ms; SMs the client saw / blocks it ran at 100, 50, 25 %: $sms100/$grid, $(jget "$T/mps_compute_50.json" sms)/$(jget "$T/mps_compute_50.json" blocks), $(jget "$T/mps_compute_25.json" sms)/$(jget "$T/mps_compute_25.json" blocks)"
    share_run mps "$RUN_S" 0.3 0.7
    if [ -n "$TORCH" ] && in_budget "torch mps"; then
      mkdir -p "$T/barrier"
      tp=()
      for r in a:0.3 b:0.7; do
        # shellcheck disable=SC2046
        timeout 150 env $(lim "torch_mps_${r%%:*}") "$PY" "$HELP/torchbench.py" --quotas "${r#*:}" --seconds "$TORCH_S" \
          --tlctl "$BIN/tlctl" --control "$T/c" --barrier "$T/barrier" --parties 2 \
          >"$T/torch_mps_${r%%:*}.json" 2>"$T/torch_mps_${r%%:*}.err" &
        tp+=($!)
      done
      wait "${tp[@]}"
      line=""
      for r in a:0.3 b:0.7; do
        ips=$(grep '"phase"' "$T/torch_mps_${r%%:*}.json" | jget /dev/stdin ips)
        line="$line q=${r#*:} $ips img/s (expected $(expect "${r#*:}")) ratio $(ratio "$ips" "${r#*:}");"
        UNSWAP_RUNS+=("torch_mps_${r%%:*}")
        say "  torch_mps_${r%%:*} limiter: $(stats_brief "torch_mps_${r%%:*}")"
      done
      say "torch mps pair:${line%;}"
    fi
    echo quit | timeout 10 nvidia-cuda-mps-control >/dev/null 2>&1; MPS_ON=
  else say "mps: nvidia-cuda-mps-control -d failed"; fi
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
fi

# ---- the PyTorch runtime on cuda under the limiter (native/test/gpu/torch-runtime.sh; issue 25): reported, not a target ----
if [ -n "$TORCH" ] && in_budget "torch runtime"; then
  say "$(GPU_CHECK_PYTHON="$PY" timeout 300 bash "$HELP/torch-runtime.sh" 2>&1 | tail -n 1)"
fi

# ---- summary ----
SHARE_ERR=$(max_of "${SHARE_ERRS[@]}")
UNSWAPPED=0
[ ${#UNSWAP_RUNS[@]} -gt 0 ] || UNSWAPPED=na
for n in "${UNSWAP_RUNS[@]}"; do
  u=$(sget "$T/$n.stats" unswapped)
  if [ -z "$u" ]; then say "unswapped: no stats file from $n"; UNSWAPPED=na; fi
  [ "$UNSWAPPED" = na ] || UNSWAPPED=$((UNSWAPPED + u))
done
say "unswapped over ${UNSWAP_RUNS[*]:-no runs}: $UNSWAPPED"
status=0
if [ "$DRY" = 1 ]; then say "targets: not judged (dry run)"
else
  miss=$(awk -v a="$OVERHEAD" -v b="$SHARE_ERR" -v c="$TQ025" -v d="$TQ050" -v e="$TQ100" -v f="$UNSWAPPED" 'BEGIN {
    if (a == "na" || a + 0 >= 200) m = m " launch_overhead_ns<200"
    if (b == "na" || b + 0 > 5) m = m " share_error_pct<=5"
    if (c == "na" || c < 0.9 || c > 1.1) m = m " torch_q025"
    if (d == "na" || d < 0.9 || d > 1.1) m = m " torch_q050"
    if (e == "na" || e < 0.9 || e > 1.1) m = m " torch_q100"
    if (f == "na" || f + 0 != 0) m = m " unswapped=0"
    print m }')
  if [ -n "$miss" ]; then say "targets missed:$miss"; status=1; else say "targets: all met"; fi
fi
echo "gpu: launch_overhead_ns=$OVERHEAD share_error_pct=$SHARE_ERR torch_q025=$TQ025 torch_q050=$TQ050 torch_q100=$TQ100 unswapped=$UNSWAPPED"
exit $status
