import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');

/** The bench's functions: image-classify (MobileNetV2, random weights) deployed three times under these names. */
export const NAMES = ['ic-a', 'ic-b', 'ic-c'];

/** A stack file with the three functions, each with its SLO (p99) and 1–2 replicas; returns its path. */
export function writeStack(dir: string, sloMs: number): string {
  const f = (name: string) => `  ${name}:
    lang: ml-inference
    handler: ${join(ROOT, 'functions', 'image-classify')}
    image: mlfaas/${name}:0.1.0
    labels:
      com.openfaas.scale.min: "1"
      com.openfaas.scale.max: "2"
    annotations:
      mlfaas.slo.latency_ms: "${sloMs}"
      mlfaas.slo.percentile: "99"
      mlfaas.batch.max: "8"
`;
  const p = join(dir, 'stack.yml');
  writeFileSync(p, `version: 1.0\nprovider:\n  name: openfaas\n  gateway: http://127.0.0.1:8080\nfunctions:\n${NAMES.map(f).join('')}`);
  return p;
}
