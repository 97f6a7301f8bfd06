"""mlfaas ml-inference-torch runtime: serves function/handler.py's model, function/model.pt
(TorchScript) or a torch.export program over HTTP (v1 and the Open Inference Protocol) with dynamic
batching and a token gate per batch. Run as `python3 main.py` (start.sh picks the interpreter) in a
directory laid out as the image: these files at the root, the handler folder in function/."""
import json
import os
import signal
import sys
import threading
import time


def log(line):
    sys.stderr.write(f'[ml-inference-torch] {line}\n')
    sys.stderr.flush()


def emit(doc):
    sys.stdout.write(json.dumps({k: v for k, v in doc.items() if v is not None}, separators=(',', ':')) + '\n')
    sys.stdout.flush()


def main():
    from config import ConfigError, parse_config
    try:
        cfg = parse_config(os.environ, os.getcwd())
    except ConfigError as err:
        log(f'fatal: {err}')
        return 2
    from server import App, make_servers
    from stats import Stats
    stats = Stats()
    app = App(cfg, stats, log)
    servers = make_servers(app)
    for s in servers:
        threading.Thread(target=s.serve_forever, kwargs={'poll_interval': 0.1}, name='http', daemon=True).start()
    emit({'type': 'listening', 'host': cfg['host'], 'port': servers[0].server_address[1], 'socket': cfg['socket_path'] or None,
          'pid': os.getpid()})

    done = threading.Event()
    status = {'code': 0}

    def drain(why):
        if app.draining:
            return
        app.draining = True
        log(f'{why}: draining ({app.batcher.queue_length if app.batcher else 0} queued)')

        def run():
            end = time.monotonic() + cfg['drain_timeout_ms'] / 1000
            for s in servers:
                s.shutdown()
                s.server_close()
            ok = app.batcher.idle(max(0.0, end - time.monotonic())) if app.batcher else True
            # let the last answers go out
            while ok and app.active > 0 and time.monotonic() < end:
                time.sleep(0.01)
            if not ok or app.active > 0:
                log(f'drain did not finish in {cfg["drain_timeout_ms"]} ms; exiting')
                status['code'] = 1
            else:
                log('drained; exiting')
            done.set()
        threading.Thread(target=run, name='drain', daemon=True).start()

    signal.signal(signal.SIGTERM, lambda *_: drain('SIGTERM'))
    signal.signal(signal.SIGINT, lambda *_: drain('SIGINT'))
    if cfg['watch_parent']:
        watch_parent(lambda: drain('parent process exited'))

    started = time.monotonic()
    import torch  # the slow import (2-4 s) after the port is announced: /_/health answers meanwhile
    from batcher import Batcher
    from model import Model, ModelLoadError
    from tokens import load_token_gate
    import v1
    import v2  # noqa: F401 -- loaded before the first request needs it
    device = cfg['device']
    if device.startswith('cuda') and not torch.cuda.is_available():
        log(f'a GPU was given (CUDA_VISIBLE_DEVICES={os.environ.get("CUDA_VISIBLE_DEVICES")}) but torch {torch.__version__} '
            'has no CUDA here; running on the CPU')
        device = 'cpu'
    torch.set_num_threads(cfg['threads'])
    try:
        model, handler = Model.load(cfg['function_dir'], cfg['model_path'], device, log)
        labels = v1.load_labels(cfg['function_dir'])
    except (ModelLoadError, ValueError, OSError) as err:
        log(f'fatal: {err}')
        return 1
    # on a GPU the LD_PRELOAD limiter meters kernel launches; tokend's CPU gate is for CPU replicas
    gate = load_token_gate(cfg['tokend_socket'] if device == 'cpu' else None, 'cpu')
    report = reporter(cfg['report_interval_ms'], stats, lambda: app.batcher.queue_length if app.batcher else 0)
    batcher = Batcher(model, gate, stats, cfg['max_batch_size'], cfg['batch_timeout_ms'], report, log)
    warm = model.warm_up()
    app.model, app.handler, app.labels, app.batcher = model, handler, labels, batcher
    app.ready = not app.draining
    first = model.inputs[0]
    emit({'type': 'ready', 'input': first['name'], 'shape': ['batch', *first['shape'][1:]] if first['shape'] else None,
          'outputs': model.output_names or [], 'inputs': model.info()['inputs'], 'warmupMs': round((time.monotonic() - started) * 1000),
          'warmedUp': warm, 'maxBatchSize': batcher.max_batch, 'batchTimeoutMs': cfg['batch_timeout_ms'], 'tokenGate': gate.kind,
          'handler': handler is not None, 'source': model.source, 'device': device, 'torch': torch.__version__,
          'threads': torch.get_num_threads()})
    while not done.wait(0.5):
        pass
    gate.close()
    return status['code']


def reporter(interval_ms, stats, queue_length):
    """A batch report line on stdout, at most once per interval: counts since the last line."""
    st = {'last': time.monotonic(), 'batches': 0, 'instances': 0}
    lock = threading.Lock()

    def on_batch(size, _latency_ms):
        with lock:
            st['batches'] += 1
            st['instances'] += size
            now = time.monotonic()
            if interval_ms <= 0 or (now - st['last']) * 1000 < interval_ms:
                return
            emit({'type': 'batches', 'windowMs': round((now - st['last']) * 1000), 'batches': st['batches'],
                  'meanBatchSize': round(st['instances'] / st['batches'], 3), 'p50Ms': stats.quantile(0.5),
                  'p99Ms': stats.quantile(0.99), 'queueLength': queue_length()})
            st.update(last=now, batches=0, instances=0)
    return on_batch


def watch_parent(on_gone):
    """Drain and exit when the parent dies (its pid changes); not when started by init (a container)."""
    initial = os.getppid()
    if initial <= 1:
        return

    def poll():
        while os.getppid() == initial:
            time.sleep(1)
        on_gone()
    threading.Thread(target=poll, name='parent-watch', daemon=True).start()


if __name__ == '__main__':
    code = main()
    sys.stdout.flush()
    os._exit(code or 0)
