/**
 * Which GPUs this node has: parsed from `nvidia-smi` (pure), or declared by `MLFAAS_GPUS=stub:N`
 * for tests on machines without a GPU, where the stub driver (`native/build/stub/libcuda.so.1`)
 * stands in for the real one. The I/O is one `nvidia-smi` call in `discoverGpus`.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

/** One GPU as `nvidia-smi` lists it. `index` is also tokend's device (`gpuN`). */
export interface Gpu {
  index: number;
  uuid: string;
  name: string;
  memoryMiB: number;
}

/** `MLFAAS_GPUS`: `auto` (nvidia-smi when present), `off`, or `stub:N` (N stub GPUs). */
export type GpuSetting = { kind: 'auto' } | { kind: 'off' } | { kind: 'stub'; count: number };

/** What this node offers replicas that want a GPU. */
export interface GpuNode {
  source: 'nvidia-smi' | 'stub' | 'none';
  gpus: Gpu[];
  /** Directory holding the stub `libcuda.so.1` (stub nodes only; put first on LD_LIBRARY_PATH). */
  stubDriverDir?: string;
  /** Why there are none (nvidia-smi absent or failing, stub not built), for the start-up log. */
  note?: string;
}

/** The query `discoverGpus` runs; `csv,noheader` answers `0, GPU-…, NVIDIA H100 80GB HBM3, 81559 MiB`. */
export const NVIDIA_SMI_ARGS = ['--query-gpu=index,uuid,name,memory.total', '--format=csv,noheader'];

/** Where `make -C native test-progs` puts the stub driver. */
export const STUB_DRIVER_DIR = resolve(__dirname, '..', 'native', 'build', 'stub');

/** Parses `MLFAAS_GPUS`; throws a message naming the variable on anything else. */
export function parseGpuSetting(raw: string | undefined): GpuSetting {
  const v = (raw ?? '').trim();
  if (v === '' || v === 'auto') return { kind: 'auto' };
  if (v === 'off' || v === 'none' || v === '0') return { kind: 'off' };
  const m = /^stub:(\d+)$/.exec(v);
  if (m && Number(m[1]) >= 1 && Number(m[1]) <= 16) return { kind: 'stub', count: Number(m[1]) };
  throw new Error(`config: MLFAAS_GPUS="${raw}" must be auto, off, or stub:N with N in [1, 16]`);
}

/**
 * `nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader[,nounits]` → GPUs.
 * Names may hold commas (nothing else does), so the fields are taken from both ends.
 */
export function parseNvidiaSmi(csv: string): Gpu[] {
  const out: Gpu[] = [];
  for (const line of csv.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const f = line.split(',').map((s) => s.trim());
    if (f.length < 4) throw new Error(`nvidia-smi: unexpected line "${line}"`);
    const index = Number(f[0]);
    const uuid = f[1];
    const mem = /^(\d+)(?:\s*MiB)?$/.exec(f[f.length - 1]);
    if (!Number.isInteger(index) || index < 0 || !/^(GPU|MIG)-/.test(uuid) || !mem) throw new Error(`nvidia-smi: unexpected line "${line}"`);
    out.push({ index, uuid, name: f.slice(2, -1).join(', '), memoryMiB: Number(mem[1]) });
  }
  return out.sort((a, b) => a.index - b.index);
}

/** N stub GPUs (the stub driver simulates kernel time; it has no memory to speak of). */
export function stubGpus(count: number): Gpu[] {
  return Array.from({ length: count }, (_, index) => ({ index, uuid: `GPU-stub-${index}`, name: 'stub libcuda.so.1', memoryMiB: 0 }));
}

/** A program on PATH (`nvidia-smi`, `nvidia-cuda-mps-control`), or undefined. */
export function onPath(bin: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    const p = join(dir, bin);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/** The node's GPUs for `setting`: one `nvidia-smi` call (auto), the stub (tests), or none. */
export function discoverGpus(
  setting: GpuSetting,
  run: (bin: string, args: string[]) => string = defaultRun,
  find: (bin: string) => string | undefined = onPath,
): GpuNode {
  if (setting.kind === 'off') return { source: 'none', gpus: [], note: 'MLFAAS_GPUS=off' };
  if (setting.kind === 'stub') {
    if (!existsSync(join(STUB_DRIVER_DIR, 'libcuda.so.1'))) {
      return { source: 'none', gpus: [],
        note: `MLFAAS_GPUS=stub:${setting.count} but ${STUB_DRIVER_DIR}/libcuda.so.1 is not built (make -C native test-progs)` };
    }
    return { source: 'stub', gpus: stubGpus(setting.count), stubDriverDir: STUB_DRIVER_DIR };
  }
  const smi = find('nvidia-smi');
  if (!smi) return { source: 'none', gpus: [], note: 'no nvidia-smi on PATH' };
  try {
    const gpus = parseNvidiaSmi(run(smi, NVIDIA_SMI_ARGS));
    return gpus.length ? { source: 'nvidia-smi', gpus } : { source: 'none', gpus: [], note: 'nvidia-smi lists no GPU' };
  } catch (e) {
    return { source: 'none', gpus: [], note: `nvidia-smi failed: ${(e as Error).message.split('\n')[0]}` };
  }
}

function defaultRun(bin: string, args: string[]): string {
  return execFileSync(bin, args, { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'pipe'] });
}
