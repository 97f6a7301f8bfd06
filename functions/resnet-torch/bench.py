"""Latency of resnet-torch on the ml-inference-torch runtime, as a client sees it: start-up (listening,
ready), request p50 for v1, v2 JSON and v2 binary (N sequential requests of one 3x224x224 image,
with the runtime's own batch time from X-Batch-Latency-Ms), and /_/profile at batch 1 and 8.

    /usr/bin/python3 functions/resnet-torch/bench.py [N=15]     # from the repository root; prints one JSON line
"""
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))


def main(n):
    img = tempfile.mkdtemp(prefix='resnet-bench-')
    shutil.copytree(os.path.join(ROOT, 'templates', 'ml-inference-torch'), img, dirs_exist_ok=True, ignore=shutil.ignore_patterns('function'))
    shutil.copytree(os.path.dirname(os.path.abspath(__file__)), os.path.join(img, 'function'), ignore=shutil.ignore_patterns('bench.py'))
    t0 = time.monotonic()
    env = {**os.environ, 'PORT': '0', 'HOST': '127.0.0.1', 'REPORT_INTERVAL_MS': '0', 'MAX_BATCH_SIZE': '8'}
    p = subprocess.Popen(['sh', os.path.join(img, 'start.sh')], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    res = {}
    try:
        for line in p.stdout:
            d = json.loads(line)
            if d['type'] == 'listening':
                port, res['listen_s'] = d['port'], round(time.monotonic() - t0, 2)
            if d['type'] == 'ready':
                res['ready_s'] = round(time.monotonic() - t0, 2)
                break
        base = f'http://127.0.0.1:{port}'
        pixels = [0.1] * 150528
        hdr = json.dumps({'inputs': [{'name': 'image', 'shape': [1, 3, 224, 224], 'datatype': 'FP32', 'parameters': {'binary_data_size': 150528 * 4}}],
                          'outputs': [{'name': 'logits', 'parameters': {'binary_data': True}}]}).encode()
        kinds = (
            ('v1', '/function/resnet-torch', json.dumps({'instances': [pixels]}).encode(), {}),
            ('v2-json', '/v2/models/resnet-torch/infer',
             json.dumps({'inputs': [{'name': 'image', 'shape': [1, 3, 224, 224], 'datatype': 'FP32', 'data': pixels}]}).encode(), {}),
            ('v2-binary', '/v2/models/resnet-torch/infer', hdr + struct.pack('<150528f', *pixels), {'Inference-Header-Content-Length': str(len(hdr))}),
        )
        for name, path, body, headers in kinds:
            lat = []
            for _ in range(n):
                t = time.monotonic()
                req = urllib.request.Request(base + path, body, {'Content-Type': 'application/json', **headers})
                with urllib.request.urlopen(req, timeout=120) as r:
                    r.read()
                    lat.append(((time.monotonic() - t) * 1000, float(r.headers['X-Batch-Latency-Ms'])))
            res[name] = {'request_ms_p50': round(statistics.median(x[0] for x in lat), 1), 'batch_ms_p50': round(statistics.median(x[1] for x in lat), 1)}
        for b in (1, 8):
            req = urllib.request.Request(base + '/_/profile', json.dumps({'batch': b, 'seconds': 3}).encode())
            with urllib.request.urlopen(req, timeout=60) as r:
                res[f'profile_b{b}_inst_per_s'] = json.loads(r.read())['instancesPerSec']
    finally:
        p.terminate()
        p.wait()
        shutil.rmtree(img, ignore_errors=True)
    print(json.dumps(res))


if __name__ == '__main__':
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
