/**
 * The environment a function process starts from: the platform's own, minus its secrets and
 * settings (`MLFAAS_*`: auth password, Redis URL, …), as OpenFaaS never hands functions the
 * gateway's credentials. Callers add the function's variables on top.
 */
export function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('MLFAAS_')) out[k] = v;
  }
  return { ...out, ...extra };
}
