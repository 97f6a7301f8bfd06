import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type Redis from 'ioredis';
import { AuthConfig } from './config';
import { keys } from './registry/keys';

/** Where a generated password is saved for the user (`cat` it into `faas-cli login`). */
export const passwordFile = (dataDir: string) => join(dataDir, 'basic-auth-password');

/**
 * The credentials the gateway enforces, and what to tell the user at start-up. With auth on and
 * no password configured, one is generated at first start: kept in Redis (so every gateway on
 * that Redis agrees) and saved to `<dataDir>/basic-auth-password` (0600, re-asserted at every
 * start). The password itself is printed only when it is generated and `toTerminal` (stderr is
 * a TTY): redirected into a file (`npm start > log`) it would sit in a world-readable log, so
 * the notice then names the file instead.
 */
export async function resolveCredentials(
  auth: AuthConfig,
  redis: Redis,
  dataDir: string,
  url: () => string,
  toTerminal: boolean = process.stderr.isTTY === true,
): Promise<{ auth: AuthConfig; notices: string[] }> {
  if (!auth.enabled) {
    return { auth, notices: ['WARNING: basic auth is OFF (MLFAAS_BASIC_AUTH=false): anyone who can reach the gateway can deploy and run code'] };
  }
  if (auth.password !== '') return { auth, notices: [`basic auth on for /system/* (user ${auth.user}, password from configuration)`] };
  const fresh = randomBytes(24).toString('base64url');
  const created = (await redis.set(keys.authPassword, fresh, 'NX')) === 'OK';
  const password = created ? fresh : ((await redis.get(keys.authPassword)) ?? fresh);
  const file = passwordFile(dataDir);
  if (!existsSync(file) || readFileSync(file, 'utf8').trim() !== password) writeFileSync(file, password + '\n', { mode: 0o600 });
  chmodSync(file, 0o600); // writeFileSync's mode applies only to a file it creates
  const login = `cat ${file} | faas-cli login --username ${auth.user} --password-stdin --gateway ${url()}`;
  const notices = !created
    ? [`basic auth on for /system/* (user ${auth.user}, password in ${file}); log in with: ${login}`]
    : toTerminal
      ? [`basic auth on for /system/*: generated password for user ${auth.user}: ${password}`, `saved to ${file}; log in with: ${login}`]
      : [
          `basic auth on for /system/*: generated a password for user ${auth.user}, saved to ${file} (mode 0600; not printed: stderr is not a terminal)`,
          `log in with: ${login}`,
        ];
  return { auth: { ...auth, password }, notices };
}
