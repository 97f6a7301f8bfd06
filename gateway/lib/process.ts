import { existsSync } from 'node:fs';

/** What of the operator's environment an unconfined function process may see: nothing secret. */
const OPERATOR_ALLOWED = ['PATH', 'HOME', 'USER', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'TERM'];

/**
 * The environment a function process starts from, built from an allow-list (never the
 * operator's environment minus a deny-list: an `AWS_SECRET_ACCESS_KEY` the operator started the
 * platform with must not reach functions). Confined (`sandboxed`), nothing of the operator's
 * environment is used at all: a fixed PATH and locale. Callers add the function's variables,
 * then the platform's, on top.
 */
export function functionBaseEnv(sandboxed: boolean, sandboxPath: string): Record<string, string> {
  if (sandboxed) return { PATH: sandboxPath, LANG: 'C.UTF-8' };
  const out: Record<string, string> = {};
  for (const k of OPERATOR_ALLOWED) {
    const v = process.env[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
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
