"""Runtime configuration, parsed once from the environment (nothing else reads os.environ)."""
import os
import re

_UNITS = {'ns': 1e-6, 'us': 1e-3, 'µs': 1e-3, 'ms': 1.0, 's': 1000.0, 'm': 60_000.0, 'h': 3_600_000.0}
_PART = re.compile(r'(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)')


class ConfigError(Exception):
    """A malformed setting; the message names the variable and the value."""


def go_duration_ms(name, raw):
    """A Go duration ("10s", "1m30s", "250ms"; a bare number is seconds, as the OpenFaaS watchdog
    reads it) in ms; None when unset; 0 means no limit."""
    if raw is None or raw.strip() == '':
        return None
    s = raw.strip()
    if re.fullmatch(r'\d+(\.\d+)?', s):
        return float(s) * 1000.0
    pos, total = 0, 0.0
    for m in _PART.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(s) or pos == 0:
        raise ConfigError(f'{name}={raw!r}: want a Go duration such as 10s, 1m30s or 500ms')
    return total


def _int(env, name, default, lo, hi):
    raw = env.get(name)
    if raw is None or raw == '':
        return default
    try:
        n = int(raw)
    except ValueError:
        n = None
    if n is None or n < lo or n > hi:
        raise ConfigError(f'{name}={raw!r}: want an integer in [{lo}, {hi}]')
    return n


def cpuset_size():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def parse_config(env, cwd):
    function_dir = os.path.abspath(os.path.join(cwd, env.get('FUNCTION_DIR') or 'function'))
    model_path = env.get('MODEL_PATH') or ''
    cores = _int(env, 'MLFAAS_CPU_CORES', 0, 0, 4096)
    # exec_timeout bounds queueing + the model run; write_timeout the whole request; read_timeout reading it
    timeouts = {k: go_duration_ms(k, env.get(k)) for k in ('read_timeout', 'write_timeout', 'exec_timeout')}
    return {
        'port': _int(env, 'PORT', 8080, 0, 65535),
        'host': env.get('HOST') or '0.0.0.0',
        'socket_path': env.get('MLFAAS_SOCKET') or '',
        'function_dir': function_dir,
        # relative paths stay relative to function/; absolute ones (the node's model cache) as they are
        'model_path': os.path.join(function_dir, model_path) if model_path else '',
        'max_batch_size': _int(env, 'MAX_BATCH_SIZE', 8, 1, 4096),
        'batch_timeout_ms': _int(env, 'BATCH_TIMEOUT_MS', 0, 0, 60_000),
        'max_body_bytes': _int(env, 'MAX_BODY_BYTES', 64 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
        'drain_timeout_ms': _int(env, 'DRAIN_TIMEOUT_MS', 9000, 0, 600_000),
        'report_interval_ms': _int(env, 'REPORT_INTERVAL_MS', 10_000, 0, 3_600_000),
        'threads': _int(env, 'TORCH_NUM_THREADS', cores or cpuset_size(), 1, 4096),
        'watch_parent': env.get('MLFAAS_WATCH_PARENT') != '0',
        'tokend_socket': env.get('MLFAAS_TOKEND_SOCKET') or None,
        'function_name': env.get('MLFAAS_FUNCTION_NAME') or '',
        'model_version': env.get('MLFAAS_MODEL_VERSION') or '1',
        # a GPU replica: the local provider sets CUDA_VISIBLE_DEVICES to the GPU it attached (gpu-replica.ts)
        'device': env.get('MLFAAS_DEVICE') or ('cuda' if (env.get('CUDA_VISIBLE_DEVICES') or '') not in ('', '-1') else 'cpu'),
        'read_timeout_ms': timeouts['read_timeout'] or 0,
        'write_timeout_ms': timeouts['write_timeout'] or 0,
        'exec_timeout_ms': timeouts['exec_timeout'] or 0,
    }
