/**
 * Which gateway a client command (`mlfaas jobs …`) talks to and with which credentials.
 * Pure: every input (flags, environment, file contents) is an argument; `readGatewayTargetInputs`
 * reads the files.
 *
 * Gateway URL, first set wins: `--gateway`, `MLFAAS_GATEWAY`, `OPENFAAS_URL` (faas-cli's),
 * `http://127.0.0.1:${MLFAAS_PORT ?? 8080}`.
 * Credentials, first set wins: `--username`/`--password`; `MLFAAS_AUTH_USER`/`MLFAAS_AUTH_PASSWORD`;
 * faas-cli's saved login for that gateway (`faas-cli login` writes `~/.openfaas/config.yml`, or
 * `$OPENFAAS_CONFIG/config.yml`); for a gateway on this machine, the password the gateway generated
 * into its data dir (`$MLFAAS_DATA_DIR/basic-auth-password`, user `admin`) when it is readable.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

export interface GatewayTargetInputs {
  flags: { gateway?: string; username?: string; password?: string };
  env: Record<string, string | undefined>;
  /** text of faas-cli's config.yml, null when absent */
  faasCliConfig: string | null;
  /** text of the local gateway's generated password file, null when absent or unreadable */
  localPassword: string | null;
}

export interface GatewayTarget {
  /** base URL without a trailing slash */
  url: string;
  /** where the URL came from, for messages */
  urlFrom: '--gateway' | 'MLFAAS_GATEWAY' | 'OPENFAAS_URL' | 'default';
  credentials?: { user: string; password: string; from: 'flags' | 'env' | 'faas-cli login' | 'local data dir' };
}

const trim = (u: string) => u.trim().replace(/\/+$/, '');

/** faas-cli's `auths: [{gateway, auth: basic, token: base64(user:pass)}]` entry for `url`. */
export function faasCliLogin(configText: string, url: string): { user: string; password: string } | undefined {
  let doc: unknown;
  try {
    doc = parse(configText);
  } catch {
    return undefined;
  }
  const auths = (doc as { auths?: unknown } | null)?.auths;
  if (!Array.isArray(auths)) return undefined;
  const a = auths.find((x) => x && typeof x.gateway === 'string' && trim(x.gateway) === url);
  if (!a || a.auth !== 'basic' || typeof a.token !== 'string') return undefined;
  const decoded = Buffer.from(a.token, 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  return i < 0 ? undefined : { user: decoded.slice(0, i), password: decoded.slice(i + 1) };
}

/** True for a URL whose host is this machine (the only case where the data dir's password applies). */
export function isLocalGateway(url: string): boolean {
  try {
    const h = new URL(url).hostname;
    return h === '127.0.0.1' || h === 'localhost' || h === '[::1]' || h === '::1';
  } catch {
    return false;
  }
}

export function resolveGatewayTarget(i: GatewayTargetInputs): GatewayTarget {
  const { flags, env } = i;
  const pick: Array<[GatewayTarget['urlFrom'], string | undefined]> = [
    ['--gateway', flags.gateway],
    ['MLFAAS_GATEWAY', env.MLFAAS_GATEWAY],
    ['OPENFAAS_URL', env.OPENFAAS_URL],
  ];
  const [urlFrom, raw] = pick.find(([, v]) => v && v.trim()) ?? ['default', `http://127.0.0.1:${env.MLFAAS_PORT || 8080}`];
  const url = trim(raw!);
  const t: GatewayTarget = { url, urlFrom };
  if (flags.password) t.credentials = { user: flags.username ?? env.MLFAAS_AUTH_USER ?? 'admin', password: flags.password, from: 'flags' };
  else if (env.MLFAAS_AUTH_PASSWORD)
    t.credentials = { user: flags.username ?? env.MLFAAS_AUTH_USER ?? 'admin', password: env.MLFAAS_AUTH_PASSWORD, from: 'env' };
  else {
    const login = i.faasCliConfig === null ? undefined : faasCliLogin(i.faasCliConfig, url);
    if (login) t.credentials = { ...login, from: 'faas-cli login' };
    else if (i.localPassword !== null && i.localPassword.trim() && isLocalGateway(url)) {
      t.credentials = { user: flags.username ?? env.MLFAAS_AUTH_USER ?? 'admin', password: i.localPassword.trim(), from: 'local data dir' };
    }
  }
  return t;
}

/** The `Authorization` header for a target, empty without credentials. */
export function authHeaders(t: GatewayTarget): Record<string, string> {
  if (!t.credentials) return {};
  return { authorization: 'Basic ' + Buffer.from(`${t.credentials.user}:${t.credentials.password}`).toString('base64') };
}

/** What to say when the gateway cannot be reached: the URL tried, where it came from, how to change it. */
export function unreachableMessage(t: GatewayTarget, cause: string): string {
  const from = t.urlFrom === 'default' ? 'the default' : `from ${t.urlFrom}`;
  return `cannot reach the mlfaas gateway at ${t.url} (${from}): ${cause}.\n` +
    'Start one with `npm start` (or `mlfaas up`), or point to yours with --gateway URL, ' +
    'MLFAAS_GATEWAY=URL or OPENFAAS_URL=URL.';
}

const readOrNull = (file: string): string | null => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
};

/** The files resolveGatewayTarget reads: faas-cli's config and the local generated password. */
export function readGatewayTargetInputs(flags: GatewayTargetInputs['flags'], env: Record<string, string | undefined>, dataDir: string): GatewayTargetInputs {
  const faasDir = env.OPENFAAS_CONFIG || join(homedir(), '.openfaas');
  return {
    flags,
    env,
    faasCliConfig: readOrNull(join(faasDir, 'config.yml')),
    localPassword: readOrNull(join(dataDir, 'basic-auth-password')),
  };
}
