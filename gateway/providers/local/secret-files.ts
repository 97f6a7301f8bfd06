import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FunctionRef } from '../../lib/names';
import type { Isolation } from './replica';

/**
 * A node's secret files, one directory per function under `<dataDir>/secrets`, as its replicas see
 * them at `/var/openfaas/secrets/<name>`.
 */
export class SecretFiles {
  constructor(
    private readonly dataDir: string,
    private readonly readSecret: (namespace: string, name: string) => Promise<string | undefined>,
    private readonly isolation: Isolation | undefined,
    private readonly log: (instance: string, text: string) => void,
  ) {}

  dir(ref: FunctionRef): string {
    return join(this.dataDir, 'secrets', ref.namespace, ref.name);
  }

  remove(ref: FunctionRef): void {
    rmSync(this.dir(ref), { recursive: true, force: true });
  }

  /**
   * The function's secret files: one file per named secret that exists, nothing else (a removed
   * secret's file goes too). Owned by the function's own uid when isolated, unreadable to every
   * other function. `uid`: the uid its replicas run as, when not the function's own (a GPU
   * replica under MPS runs as the node's GPU uid: the files are then that uid's, and only this
   * function's replicas have them bound in). Returns their directory (undefined: none named).
   */
  async write(ref: FunctionRef, names: string[], instance: string, runUid?: number): Promise<string | undefined> {
    const dir = this.dir(ref);
    if (!names.length) {
      rmSync(dir, { recursive: true, force: true });
      return undefined;
    }
    mkdirSync(join(this.dataDir, 'secrets'), { recursive: true, mode: 0o700 });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const uid = this.isolation ? (runUid ?? (await this.isolation.uidFor(ref))) : undefined;
    const want = new Set<string>();
    for (const name of names) {
      const value = await this.readSecret(ref.namespace, name);
      if (value === undefined) {
        // faas-cli deploys before `secret create` in common flows; start, and say so in the logs
        if (instance) this.log(instance, `warning: secret "${name}" not found in namespace ${ref.namespace}; starting without it`);
        continue;
      }
      want.add(name);
      const file = join(dir, name);
      const bytes = Buffer.from(value, 'base64');
      if (existsSync(file) && readFileSync(file).equals(bytes)) {
        // the 2 s sync rewrites only changes; the owner follows the uid the replicas run as (a
        // function that became a GPU one on an MPS node runs as the GPU uid)
        if (uid !== undefined && statSync(file).uid !== uid) chownSync(file, uid, uid);
        continue;
      }
      const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
      writeFileSync(tmp, bytes, { mode: 0o400 });
      if (uid !== undefined) chownSync(tmp, uid, uid);
      renameSync(tmp, file);
    }
    for (const f of readdirSync(dir)) if (!want.has(f)) rmSync(join(dir, f), { force: true });
    if (uid !== undefined) {
      chownSync(dir, uid, uid);
      chmodSync(dir, 0o500);
    }
    return dir;
  }
}
