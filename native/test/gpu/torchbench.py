"""PyTorch throughput for the GPU check (native/test/gpu-check.sh): resnet50, fp16, batch 8,
one request = forward + torch.cuda.synchronize(), as a serving replica does.

  torchbench.py [--seconds 3] [--warm 0.5]
                [--quotas 1.0,0.5,0.25 --tlctl BIN --control SOCK]   phases at these quotas; the
                    process sets its own quota (SET_QUOTA by its pid, through tlctl) before each
                [--busy]            also measure the GPU busy fraction (see below)
                [--kernels FILE]    with --busy: each kernel's launches and CUPTI time over the 20
                                    profiled requests, one JSON line per kernel name
                [--barrier DIR --parties N]   start measuring when N processes are warm
                [--deadline S]      killed by SIGALRM after S seconds (default 240)

Prints one JSON line per phase: {"phase", "quota", "ips", "n", "p50_ms", "p99_ms", ...}, and with
--busy one line {"busy": fraction, "method": ...}.

GPU busy fraction (the utilisation the quota is compared with): the kernel time of one request,
the union of all CUDA kernel/memcpy intervals that torch.profiler (CUPTI) records over 20
requests, divided by the wall time of one request measured without the profiler (the profiler
slows the CPU side, not the kernels). If the profiler records no kernels, NVML's utilisation
(libnvidia-ml via ctypes, "a kernel was running" over each sample period, sampled every 100 ms
during the measurement) is used instead; if neither works, the fraction is 1 (method "assumed").
"""
import argparse
import ctypes
import json
import os
import signal
import subprocess
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument('--seconds', type=float, default=3.0)
ap.add_argument('--warm', type=float, default=0.5)
ap.add_argument('--quotas', default='')
ap.add_argument('--tlctl', default='')
ap.add_argument('--control', default='')
ap.add_argument('--busy', action='store_true')
ap.add_argument('--kernels', default='')
ap.add_argument('--barrier', default='')
ap.add_argument('--parties', type=int, default=1)
ap.add_argument('--deadline', type=float, default=240)
ap.add_argument('--batch', type=int, default=8)
args = ap.parse_args()
signal.alarm(int(args.deadline))  # no handler installed: SIGALRM terminates even inside CUDA

import torch  # noqa: E402  (after the alarm: the import itself can hang on a broken driver)


def out(**kw):
    print(json.dumps(kw), flush=True)


def model():
    try:
        import torchvision
        return 'resnet50', torchvision.models.resnet50()  # random weights: no download
    except Exception as e:  # no torchvision: a plain conv stack of similar kernel sizes
        out(note='torchvision unavailable (%r): conv stack instead' % (e,))
        layers = [torch.nn.Sequential(torch.nn.Conv2d(3 if i == 0 else 128, 128, 3, padding=1), torch.nn.ReLU())
                  for i in range(12)]
        return 'cnn', torch.nn.Sequential(*layers, torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                                          torch.nn.Linear(128, 1000))


def requests(m, x, secs):
    """Forward + synchronize for secs; latencies in seconds and the wall time."""
    lat = []
    t0 = time.perf_counter()
    end = t0 + secs
    while time.perf_counter() < end:
        a = time.perf_counter()
        m(x)
        torch.cuda.synchronize()
        lat.append(time.perf_counter() - a)
    return lat, time.perf_counter() - t0


def set_quota(q):
    """SET_QUOTA for this pid; tlctl runs without the limiter (it would overwrite our stats file)."""
    env = {k: v for k, v in os.environ.items() if k != 'LD_PRELOAD' and not k.startswith('TL_')}
    r = subprocess.run([args.tlctl, args.control, 'quota', str(os.getpid()), q, q], env=env,
                       capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        out(error='SET_QUOTA %s failed: %s %s' % (q, r.stdout.strip(), r.stderr.strip()))


def barrier():
    if not args.barrier:
        return
    open(os.path.join(args.barrier, str(os.getpid())), 'w').close()
    end = time.time() + 90
    while len(os.listdir(args.barrier)) < args.parties and time.time() < end:
        time.sleep(0.01)


class Nvml:
    """GPU utilisation samples from libnvidia-ml (ctypes; no pynvml needed)."""

    def __init__(self):
        self.samples, self.stop = [], threading.Event()
        try:
            self.lib = ctypes.CDLL('libnvidia-ml.so.1')
            self.dev = ctypes.c_void_p()
            if self.lib.nvmlInit_v2() or self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.dev)):
                self.lib = None
        except OSError:
            self.lib = None

    def run(self):
        class Util(ctypes.Structure):
            _fields_ = [('gpu', ctypes.c_uint), ('memory', ctypes.c_uint)]
        u = Util()
        while not self.stop.wait(0.1):
            if self.lib.nvmlDeviceGetUtilizationRates(self.dev, ctypes.byref(u)) == 0:
                self.samples.append(u.gpu / 100.0)

    def start(self):
        if self.lib:
            self.thread = threading.Thread(target=self.run, daemon=True)
            self.thread.start()

    def mean(self):
        if not self.lib:
            return None
        self.stop.set()
        self.thread.join()
        s = self.samples[5:] or self.samples  # the first 0.5 s: the period before the run
        return sum(s) / len(s) if s else None


def kernel_seconds(m, x, k):
    """Union of the GPU activity intervals over k requests under torch.profiler, in seconds."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(k):
            m(x)
            torch.cuda.synchronize()
    iv, per = [], {}
    for e in prof.events():
        if getattr(e, 'device_type', None) == torch.autograd.DeviceType.CUDA:
            iv.append((e.time_range.start, e.time_range.end))  # microseconds
            n_us = per.setdefault(e.name, [0, 0.0])
            n_us[0] += 1
            n_us[1] += e.time_range.end - e.time_range.start
    if args.kernels:
        with open(args.kernels, 'w') as f:
            for name, (n, us) in sorted(per.items(), key=lambda kv: -kv[1][1]):
                f.write(json.dumps({'name': name, 'n': n, 'us': round(us, 3)}) + '\n')
    iv.sort()
    busy, cur_s, cur_e = 0.0, None, None
    for s, e in iv:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                busy += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        busy += cur_e - cur_s
    return busy / 1e6, len(iv)


def phase(m, x, name, quota):
    lat, wall = requests(m, x, args.seconds)
    lat.sort()
    n = len(lat)
    out(phase=name, quota=quota, model=mname, batch=args.batch, n=n, ips=round(args.batch * n / wall, 1),
        p50_ms=round(lat[n // 2] * 1e3, 3), p99_ms=round(lat[min(n - 1, int(n * 0.99))] * 1e3, 3),
        wall_s=round(wall, 3), mps_pct=os.environ.get('CUDA_MPS_ACTIVE_THREAD_PERCENTAGE'))
    return n, wall


torch.backends.cudnn.benchmark = True
mname, m = model()
m = m.to('cuda').half().eval()
x = torch.randn(args.batch, 3, 224, 224, device='cuda', dtype=torch.float16)
with torch.inference_mode():
    for _ in range(3):  # cudnn autotuning
        m(x)
    torch.cuda.synchronize()
    quotas = [q for q in args.quotas.split(',') if q]
    if not quotas:  # unlimited
        requests(m, x, args.warm)
        barrier()
        nv = Nvml() if args.busy else None
        if nv:
            nv.start()
        n, wall = phase(m, x, 'unlimited', None)
        if args.busy:
            util = nv.mean()
            k_s, kinds = 0.0, 0
            try:
                k_s, kinds = kernel_seconds(m, x, 20)
            except Exception as e:
                out(note='profiler failed: %r' % (e,))
            if kinds:
                frac, method = min(1.0, (k_s / 20) / (wall / n)), 'profiler'
            elif util is not None:
                frac, method = util, 'nvml'
            else:
                frac, method = 1.0, 'assumed'
            out(busy=round(frac, 4), method=method, gpu_ms_per_request=round(k_s / 20 * 1e3, 3),
                wall_ms_per_request=round(wall / n * 1e3, 3), gpu_intervals=kinds,
                nvml=None if util is None else round(util, 4))
    for q in quotas:
        set_quota(q)
        requests(m, x, args.warm)  # the new quota's first windows, the limiter's cost estimate
        barrier()
        phase(m, x, 'q' + q, float(q))
