#!/usr/bin/env bash
# A/B of limiter configurations on the torch benchmark (diagnostics beside native/test/gpu-check.sh):
# one unlimited process without the limiter, then one process per configuration running the same
# quota phases, each configuration's environment given as an argument ("" = the default).
#   torch-ab.sh OUT_DIR QUOTAS CONFIG...      e.g. torch-ab.sh /tmp/ab 1.0,0.5,1.0 "" "TL_GATE=0"
# Prints one line per phase: config, phase, img/s, ratio to unlimited, p50/p99 ms; then the
# configuration's limiter counters. Needs a GPU, make + gcc, python3 with torch.
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
B=$ROOT/native/build
HELP=$ROOT/native/test/gpu
OUT=$1 QUOTAS=$2
shift 2
PY=${GPU_CHECK_PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=python3
mkdir -p "$OUT"
make -s -C "$ROOT/native" build/tokend build/liblimiter.so >"$OUT/make.log" 2>&1 || { tail "$OUT/make.log"; exit 2; }
gcc -O2 -o "$OUT/tlctl" "$HELP/tlctl.c" || exit 2
"$B/tokend" --socket "$OUT/s" --control "$OUT/c" --window-ms 20 --gpus 1 2>"$OUT/tokend.log" &
TOKEND=$!
trap 'kill $TOKEND 2>/dev/null' EXIT
sleep 0.3
timeout 120 "$PY" "$HELP/torchbench.py" --seconds 3 >"$OUT/free.json" 2>"$OUT/free.err"
U=$(sed -n 's/.*"ips": \([0-9.]*\).*/\1/p' "$OUT/free.json" | head -n1)
echo "unlimited: ${U:-na} img/s"
i=0
for cfg in "$@"; do
  i=$((i + 1))
  # shellcheck disable=SC2086  # cfg is NAME=VALUE words
  timeout 150 env $cfg LD_PRELOAD="$B/liblimiter.so" TL_TOKEND_SOCKET="$OUT/s" TL_STATS_FILE="$OUT/c$i.stats" \
    "$PY" "$HELP/torchbench.py" --quotas "$QUOTAS" --seconds 3 --tlctl "$OUT/tlctl" --control "$OUT/c" >"$OUT/c$i.json" 2>"$OUT/c$i.err"
  while read -r line; do
    ph=$(sed -n 's/.*"phase": "\([^"]*\)".*/\1/p' <<<"$line")
    ips=$(sed -n 's/.*"ips": \([0-9.]*\).*/\1/p' <<<"$line")
    p50=$(sed -n 's/.*"p50_ms": \([0-9.]*\).*/\1/p' <<<"$line")
    p99=$(sed -n 's/.*"p99_ms": \([0-9.]*\).*/\1/p' <<<"$line")
    [ -n "$ph" ] && echo "[${cfg:-default}] $ph: $ips img/s, $(awk -v a="$ips" -v b="${U:-0}" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "na" }') of unlimited, p50 $p50 ms, p99 $p99 ms"
  done <"$OUT/c$i.json"
  tail -n 3 "$OUT/c$i.err" | grep -i error
  echo "[${cfg:-default}] $(grep -E '^(launches|throttled|throttled_ns|cost_ns|samples|gated|gate_timeouts)=' "$OUT/c$i.stats" | tr '\n' ' ')"
done
