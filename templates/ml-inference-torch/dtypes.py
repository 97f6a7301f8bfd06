"""Open Inference Protocol (KServe v2) datatypes <-> numpy and torch dtypes, in one place.

torch 1.13 has no uint16/32/64: those arrive in numpy's type and are widened for the model
(UINT16 -> int32, UINT32 -> int64; UINT64 -> int64, values over 2^63-1 refused)."""
import math

import numpy as np
import torch

NUMPY = {
    'BOOL': np.bool_, 'INT8': np.int8, 'INT16': np.int16, 'INT32': np.int32, 'INT64': np.int64,
    'UINT8': np.uint8, 'UINT16': np.uint16, 'UINT32': np.uint32, 'UINT64': np.uint64,
    'FP16': np.float16, 'FP32': np.float32, 'FP64': np.float64,
}
DATATYPES = tuple(NUMPY) + ('BYTES',)
_WIDEN = {'UINT16': torch.int32, 'UINT32': torch.int64, 'UINT64': torch.int64}
_TORCH = {
    torch.bool: 'BOOL', torch.int8: 'INT8', torch.int16: 'INT16', torch.int32: 'INT32', torch.int64: 'INT64',
    torch.uint8: 'UINT8', torch.float16: 'FP16', torch.float32: 'FP32', torch.float64: 'FP64',
}
TORCH_OF = {v: k for k, v in _TORCH.items()}
BYTES_PER = {'BOOL': 1, 'INT8': 1, 'UINT8': 1, 'INT16': 2, 'UINT16': 2, 'FP16': 2, 'INT32': 4, 'UINT32': 4, 'FP32': 4,
             'INT64': 8, 'UINT64': 8, 'FP64': 8}


def from_torch(dtype):
    """The v2 datatype of a torch dtype (bfloat16 is answered as FP32)."""
    if dtype == torch.bfloat16:
        return 'FP32'
    return _TORCH.get(dtype)


def to_tensor(arr, datatype):
    """A numpy array of `datatype` -> a torch tensor the model can take. Raises ValueError."""
    if datatype in _WIDEN:
        if datatype == 'UINT64' and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
            raise ValueError('a UINT64 value is over 2^63-1, which torch cannot hold')
        return torch.from_numpy(arr.astype(np.int64 if _WIDEN[datatype] == torch.int64 else np.int32))
    return torch.from_numpy(np.ascontiguousarray(arr))


def from_json(values, datatype, shape, where):
    """JSON data (flat or nested, row-major) -> numpy array of `shape`. Raises ValueError naming `where`."""
    n = math.prod(shape)
    if not isinstance(values, list):
        raise ValueError(f'{where}: data must be an array')
    if datatype != 'BYTES':
        try:  # the common case in one C pass: numbers, flat or nested in equal rows
            arr = np.array(values)
        except (ValueError, OverflowError):
            arr = None
        if arr is not None and arr.dtype.kind in 'biuf' and arr.size == n and (n > 0 or arr.ndim > 0):
            return _typed(arr.reshape(-1), datatype, shape, where)
    flat = _flatten(values, where)
    if len(flat) != n:
        raise ValueError(f'{where}: data has {len(flat)} values; shape {list(shape)} needs {n}')
    if datatype == 'BYTES':
        return np.array([v.encode() if isinstance(v, str) else bytes(v) for v in flat], dtype=object).reshape(shape)
    bad = next((i for i, v in enumerate(flat) if isinstance(v, str) or not isinstance(v, (int, float))), None)
    if bad is not None:
        raise ValueError(f'{where}: value {bad} ({flat[bad]!r}) is not a number')
    if datatype.startswith('FP') or datatype == 'BOOL':
        return _typed(np.array([float(v) for v in flat]) if datatype != 'BOOL' else np.array(flat, dtype=object), datatype, shape, where)
    info = np.iinfo(NUMPY[datatype])
    if any(isinstance(v, float) and not v.is_integer() for v in flat):
        raise ValueError(f'{where}: {datatype} data must be integers')
    if flat and (int(min(flat)) < info.min or int(max(flat)) > info.max):
        raise ValueError(f'{where}: a value is outside {datatype}\'s range [{info.min}, {info.max}]')
    return np.array([int(v) for v in flat], dtype=NUMPY[datatype]).reshape(shape)


def _typed(arr, datatype, shape, where):
    """A flat numeric (or bool) array -> `datatype` in `shape`, refusing what would not fit."""
    kind = arr.dtype.kind
    if datatype == 'BOOL':
        if kind == 'b' or (kind in 'iuO' and all(v is True or v is False or v in (0, 1) for v in arr.tolist())):
            return arr.astype(np.bool_).reshape(shape)
        raise ValueError(f'{where}: BOOL data must be true/false')
    if kind == 'b':
        raise ValueError(f'{where}: value 0 (True/False) is not a number')
    if datatype.startswith('FP'):
        return arr.astype(NUMPY[datatype]).reshape(shape)
    if kind == 'f' and not bool((np.mod(arr, 1) == 0).all()):
        raise ValueError(f'{where}: {datatype} data must be integers')
    info = np.iinfo(NUMPY[datatype])
    if arr.size and (int(arr.min()) < info.min or int(arr.max()) > info.max):
        raise ValueError(f'{where}: a value is outside {datatype}\'s range [{info.min}, {info.max}]')
    return arr.astype(NUMPY[datatype]).reshape(shape)


def from_bytes(raw, datatype, shape, where):
    """The binary tensor extension's raw bytes -> numpy array (BYTES: 4-byte LE length + bytes each)."""
    n = math.prod(shape)
    if datatype == 'BYTES':
        out, pos = [], 0
        while pos < len(raw):
            if pos + 4 > len(raw):
                raise ValueError(f'{where}: truncated BYTES element')
            k = int.from_bytes(raw[pos:pos + 4], 'little')
            out.append(bytes(raw[pos + 4:pos + 4 + k]))
            pos += 4 + k
        if len(out) != n or pos != len(raw):
            raise ValueError(f'{where}: {len(out)} BYTES elements; shape {list(shape)} needs {n}')
        return np.array(out, dtype=object).reshape(shape)
    if len(raw) != n * BYTES_PER[datatype]:
        raise ValueError(f'{where}: binary_data_size {len(raw)} != {n} x {BYTES_PER[datatype]} bytes for shape {list(shape)}')
    return np.frombuffer(raw, dtype=np.dtype(NUMPY[datatype]).newbyteorder('<')).reshape(shape).copy()


def to_bytes(arr, datatype):
    if datatype == 'BYTES':
        return b''.join(len(b).to_bytes(4, 'little') + b for b in (_as_bytes(v) for v in arr.reshape(-1)))
    return np.ascontiguousarray(arr, dtype=np.dtype(NUMPY[datatype]).newbyteorder('<')).tobytes()


def to_numpy(value):
    """A model output (tensor or list of str/bytes) -> (numpy array, v2 datatype)."""
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu()
        if t.dtype == torch.bfloat16:
            t = t.float()
        dt = from_torch(t.dtype)
        if dt is None:
            raise TypeError(f'output dtype {t.dtype} has no Open Inference Protocol datatype')
        return t.numpy(), dt
    arr = np.array([_as_bytes(v) for v in value], dtype=object)
    return arr, 'BYTES'


def json_data(arr, datatype):
    flat = arr.reshape(-1)
    if datatype == 'BYTES':
        return [_as_bytes(v).decode('utf-8', 'replace') for v in flat]
    return flat.tolist()


def _as_bytes(v):
    return v.encode() if isinstance(v, str) else bytes(v)


def _flatten(values, where):
    if not isinstance(values, list):
        raise ValueError(f'{where}: data must be an array')
    out, stack = [], [iter(values)]
    while stack:
        for v in stack[-1]:
            if isinstance(v, list):
                stack.append(iter(v))
                break
            out.append(v)
        else:
            stack.pop()
    return out
