/** Kubernetes resource quantities, as deploys (`limits`, `requests`) and settings write them. Pure. */

const MEMORY_UNITS: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };

/** A memory quantity (`512Mi`, `1G`, `1000`) in bytes, or undefined when it is not one. */
export function memoryQuantityBytes(q: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q);
  return m ? Math.round(Number(m[1]) * MEMORY_UNITS[m[2] ?? '']) : undefined;
}

/** A CPU quantity (`500m`, `2`, `0.5`) in cores, or undefined when it is not one. */
export function cpuQuantityCores(q: string): number | undefined {
  if (!/^\d+(\.\d+)?m?$/.test(q)) return undefined;
  return q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q);
}
