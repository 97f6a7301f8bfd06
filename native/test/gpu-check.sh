#!/usr/bin/env bash
# The limiter's share and overhead measurement with real kernels, for a machine
# with an NVIDIA GPU (the CI has none: test/native uses the stub driver).
#   native/test/gpu-check.sh [seconds per share run, default 5]
# Builds tokend, liblimiter.so and the nvcc cudart program, then:
#  1. host cost per launch call, without and with the limiter (fast path);
#  2. one process at quota 1.0, then two at 0.3 / 0.7 (1 ms spin kernels,
#     20 ms window): fraction of wall time each spent in its kernels;
#  3. the limiter's counters: entry points swapped, none unswapped.
# Prints one summary line:
#   gpu-check: launch_overhead_ns=<x> share_error_pct=<y> used=<a>/<b>
set -euo pipefail
cd "$(dirname "$0")/.."
RUN_S=${1:-5}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no GPU (nvidia-smi -L failed); nothing measured"
  exit 0
fi
nvidia-smi -L
make -s all cuda-progs
B=$PWD/build
PROG=$B/prog_cudart_shared
LIM=$B/liblimiter.so
T=$(mktemp -d /tmp/gpuchk.XXXXXX)
"$B/tokend" --socket "$T/s" --control "$T/c" --window-ms 20 2>"$T/tokend.log" &
TOKEND=$!
cleanup() { kill "$TOKEND" 2>/dev/null || true; wait "$TOKEND" 2>/dev/null || true; rm -rf "$T"; }
trap cleanup EXIT
for _ in $(seq 100); do [ -S "$T/c" ] && break; sleep 0.05; done

ctl() { # one JSON request line to the control socket
  node -e 'const s=require("net").createConnection(process.argv[1]);s.on("connect",()=>s.write(process.argv[2]+"\n"));s.on("data",d=>{process.stdout.write(d);s.end()})' "$T/c" "$1"
}
field() { node -e 'const j=JSON.parse(require("fs").readFileSync(0,"utf8").trim().split("\n").pop());console.log(j[process.argv[1]])' "$1"; }
median3() { sort -g | sed -n 2p; }

echo "== 1. host cost per launch call (3 runs each, 100k empty kernels)"
base=$(for _ in 1 2 3; do "$PROG" --seconds 0 --count 100000 | field perLaunchNs; done | median3)
with=$(for _ in 1 2 3; do LD_PRELOAD=$LIM TL_TOKEND_SOCKET=$T/s TL_NS_PER_BLOCK=1 "$PROG" --seconds 0 --count 100000 | field perLaunchNs; done | median3)
overhead=$(node -e "console.log(($with - $base).toFixed(1))")
echo "without limiter ${base} ns, with limiter ${with} ns, overhead ${overhead} ns"

run_limited() { # name seconds -> starts a limited process in the background, prints its pid
  LD_PRELOAD=$LIM TL_TOKEND_SOCKET=$T/s TL_LOG=$T/$1.log TL_STATS_FILE=$T/$1.stats \
    "$PROG" --seconds "$2" --kernel-us 1000 >"$T/$1.json" &
  echo $!
}
used_of() { node -e 'const j=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log((j.busyNs/j.elapsedNs).toFixed(3))' "$T/$1.json"; }

echo "== 2. shares, 1 ms kernels, window 20 ms"
p=$(run_limited alone 2); ctl "{\"op\":\"SET_QUOTA\",\"pid\":$p,\"device\":\"gpu0\",\"request\":1,\"limit\":1}" >/dev/null; wait "$p"
echo "alone at 1.0: used $(used_of alone)"
a=$(run_limited a "$RUN_S"); ctl "{\"op\":\"SET_QUOTA\",\"pid\":$a,\"device\":\"gpu0\",\"request\":0.3,\"limit\":0.3}" >/dev/null
b=$(run_limited b "$RUN_S"); ctl "{\"op\":\"SET_QUOTA\",\"pid\":$b,\"device\":\"gpu0\",\"request\":0.7,\"limit\":0.7}" >/dev/null
wait "$a" "$b"
ua=$(used_of a); ub=$(used_of b)
err=$(node -e "console.log((Math.max(Math.abs($ua-0.3),Math.abs($ub-0.7))*100).toFixed(2))")
echo "quotas 0.3/0.7: used $ua/$ub (max error $err pts)"

echo "== 3. limiter counters"
for n in alone a b; do
  echo "$n: $(grep -E '^(launches|swapped|unswapped|throttled|failopen|ns_per_block)=' "$T/$n.stats" | tr '\n' ' ')"
  grep -q '^unswapped=0$' "$T/$n.stats" || echo "WARNING: $n had entry points the driver returned as unknown pointers (see $n.log)"
done
echo "gpu-check: launch_overhead_ns=$overhead share_error_pct=$err used=$ua/$ub"
