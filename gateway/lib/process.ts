import { existsSync } from 'node:fs';

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

const SETPRIV = '/usr/bin/setpriv';
const hasSetpriv = existsSync(SETPRIV);

/**
 * `argv` wrapped so the process gets SIGKILL when its parent dies, even when the parent is
 * SIGKILLed (PR_SET_PDEATHSIG through util-linux's setpriv; unwrapped where setpriv is missing).
 */
export function tiedToParent(argv: string[]): string[] {
  return hasSetpriv ? [SETPRIV, '--pdeathsig', 'KILL', '--', ...argv] : argv;
}

/** Whether a process with this pid exists (signal 0). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
