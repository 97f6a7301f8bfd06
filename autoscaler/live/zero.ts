import { parseDurationMs } from '../../gateway/registry/manual-scale';

export const ZERO_DURATION_KEY = 'com.openfaas.scale.zero-duration';
const DEFAULT_ZERO_MS = 15 * 60_000;

/**
 * The idle window after which a min_scale 0 function goes to zero, ms, or undefined when it may
 * not (min_scale ≥ 1). `com.openfaas.scale.zero-duration` (annotation, then label; a Go duration
 * like `15m` or `30s`) > MLFAAS_SCALE_ZERO_DEFAULT > 15 m (OpenFaaS's default). A malformed value
 * falls back to the default rather than scaling to zero at once.
 */
export function zeroAfterMs(minScale: number, labels: Record<string, string>, annotations: Record<string, string>,
  env: NodeJS.ProcessEnv = process.env): number | undefined {
  if (minScale !== 0) return undefined;
  return parseDurationMs(annotations[ZERO_DURATION_KEY] ?? labels[ZERO_DURATION_KEY]) ?? parseDurationMs(env.MLFAAS_SCALE_ZERO_DEFAULT) ?? DEFAULT_ZERO_MS;
}
