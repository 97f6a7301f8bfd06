#!/usr/bin/env bash
# The PyTorch runtime (templates/ml-inference-torch) on a real GPU with functions/resnet-torch,
# run the way the local provider runs a GPU replica: CUDA_VISIBLE_DEVICES set, and when
# native/build has them, tokend + the LD_PRELOAD limiter (which meters the kernel launches).
# Self-contained: bash and a python3 with torch (no Node.js, no curl).
#
#   native/test/gpu/torch-runtime.sh        on a GPU machine (about 1 min)
#   GPU_TORCH_DRY=1 native/test/gpu/...     the same on the CPU (checks the script; device=cpu)
# Environment: GPU_CHECK_PYTHON (default /opt/torch/.venv/bin/python3, else /usr/bin/python3).
# Ends with one line:
#   gpu-torch-runtime: device=<d> v1=<status> v2=<status> max_abs_diff=<x> batch_max=<n> limiter_launches=<n|na>
# Exit: 0 answered on the expected device and equal (within TF32's error) to torch on the CPU;
# 1 otherwise. No GPU (not a dry run): says so and exits 0.
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
B=$ROOT/native/build
DRY=${GPU_TORCH_DRY:-0}
PY=${GPU_CHECK_PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=/usr/bin/python3
if [ "$DRY" != 1 ] && ! { command -v nvidia-smi >/dev/null 2>&1 && timeout 30 nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }; then
  echo "gpu-torch-runtime: no GPU (nvidia-smi -L); nothing measured"; exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/gpu-torch.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; [ -n "${GPU_CHECK_KEEP:-}" ] || rm -rf "$T"; }
trap cleanup EXIT
say() { printf '[%4ds] %s\n' "$SECONDS" "$*"; }

mkdir -p "$T/img"
cp -r "$ROOT/templates/ml-inference-torch/." "$T/img/"
rm -rf "$T/img/function"
cp -r "$ROOT/functions/resnet-torch" "$T/img/function"
ENV=(PORT=0 HOST=127.0.0.1 MLFAAS_PYTHON="$PY" MLFAAS_WATCH_PARENT=0 REPORT_INTERVAL_MS=0 MAX_BATCH_SIZE=8 BATCH_TIMEOUT_MS=20)
LIMITED=0
if [ "$DRY" != 1 ]; then
  ENV+=(CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}")
  if [ -x "$B/tokend" ] && [ -f "$B/liblimiter.so" ]; then
    "$B/tokend" --socket "$T/s" --control "$T/c" --window-ms 20 --gpus 1 2>"$T/tokend.log" &
    pids+=($!)
    for _ in $(seq 50); do [ -S "$T/s" ] && break; sleep 0.1; done
    if [ -S "$T/s" ]; then
      ENV+=(LD_PRELOAD="$B/liblimiter.so" TL_TOKEND_SOCKET="$T/s" TL_DEVICE=0 TL_STATS_FILE="$T/limiter.stats")
      LIMITED=1
    else say "tokend did not start: running without the limiter"; fi
  else say "native/build has no tokend/liblimiter.so (make -C native): running without the limiter"; fi
fi
say "python: $PY; limiter: $LIMITED"
env "${ENV[@]}" sh "$T/img/start.sh" >"$T/out" 2>"$T/err" &
pids+=($!)
for _ in $(seq 1200); do grep -q '"type":"ready"' "$T/out" && break; kill -0 "${pids[-1]}" 2>/dev/null || break; sleep 0.1; done
if ! grep -q '"type":"ready"' "$T/out"; then
  say "the runtime did not become ready:"; tail -n 20 "$T/err"
  echo "gpu-torch-runtime: device=na v1=na v2=na max_abs_diff=na batch_max=na limiter_launches=na"; exit 1
fi
say "ready: $(grep '"type":"ready"' "$T/out")"

# the client: one v2 request, one v1 request, 8 concurrent v2 requests; the CPU reference from the same handler
"$PY" - "$T/out" "$T/img/function" >"$T/result.json" 2>"$T/client.err" <<'PYEOF'
import importlib.util, json, sys, threading, urllib.request
import torch
out, fdir = sys.argv[1], sys.argv[2]
listening = next(json.loads(l) for l in open(out) if '"listening"' in l)
ready = next(json.loads(l) for l in open(out) if '"type":"ready"' in l)
base = f'http://127.0.0.1:{listening["port"]}'
def post(path, doc):
    req = urllib.request.Request(base + path, json.dumps(doc).encode(), {'Content-Type': 'application/json'})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, dict(r.headers), json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.loads(e.read() or b'{}')
g = torch.Generator().manual_seed(7)
x = torch.rand(1, 3, 224, 224, generator=g)
V2 = {'inputs': [{'name': 'image', 'shape': [1, 3, 224, 224], 'datatype': 'FP32', 'data': x.reshape(-1).tolist()}]}
s2, h2, b2 = post('/v2/models/resnet-torch/infer', V2)
s1, _, b1 = post('/function/resnet-torch', {'instances': [x[0].tolist()]})
spec = importlib.util.spec_from_file_location('h', fdir + '/handler.py'); h = importlib.util.module_from_spec(spec); spec.loader.exec_module(h)
with torch.inference_mode():
    ref = h.load().eval()(x)[0]
diff = float((torch.tensor(b2['outputs'][0]['data']) - ref).abs().max()) if s2 == 200 else None
sizes = []
def one():
    s, hh, _ = post('/v2/models/resnet-torch/infer', V2)
    sizes.append(int(hh.get('X-Batch-Size', 0)) if s == 200 else 0)
ts = [threading.Thread(target=one) for _ in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
print(json.dumps({'device': ready.get('device'), 'v1': s1, 'v2': s2, 'diff': diff, 'scale': float(ref.abs().max()),
                  'v1label': b1.get('predictions', [{}])[0].get('index'), 'refIndex': int(ref.argmax()), 'batchMax': max(sizes), 'sizes': sizes,
                  # the v1 argmax may be a near-tie away from the CPU's under TF32: its CPU logit within the tolerance of the top
                  'v1ok': s1 == 200 and float(ref.max() - ref[b1['predictions'][0]['index']]) <= 1e-2 * max(1.0, float(ref.abs().max())),
                  'latencyMs': h2.get('X-Batch-Latency-Ms')}))
PYEOF
[ -s "$T/result.json" ] || { say "client failed:"; tail -n 20 "$T/client.err"; }
r=$(cat "$T/result.json" 2>/dev/null)
say "result: ${r:-none}"
launches=na
[ "$LIMITED" = 1 ] && launches=$(sed -n 's/^launches=//p' "$T/limiter.stats" 2>/dev/null | head -n1)
status=$("$PY" -c '
import json, sys
r = json.loads(sys.argv[1] or "{}")
ok = r.get("device") == sys.argv[2] and r.get("v1") == 200 and r.get("v2") == 200 and r.get("diff") is not None \
    and r["diff"] <= 1e-2 * max(1.0, r["scale"]) and r.get("v1ok") is True
d = r.get("diff")
g = lambda k: r.get(k, "na")
dd = "na" if d is None else "%.2e" % d
print("0" if ok else "1", "device=%s v1=%s v2=%s max_abs_diff=%s batch_max=%s" % (g("device"), g("v1"), g("v2"), dd, g("batchMax")))
' "$r" "$([ "$DRY" = 1 ] && echo cpu || echo cuda)")
[ "$LIMITED" = 1 ] && [ -z "$launches" -o "$launches" = 0 ] && { say "the limiter counted no kernel launches"; status="1${status#?}"; }
echo "gpu-torch-runtime: ${status#? } limiter_launches=${launches:-na}"
exit "${status%% *}"
