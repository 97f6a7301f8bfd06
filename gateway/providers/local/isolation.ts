import type Redis from 'ioredis';
import { Config } from '../../config';
import { Cgroups } from './cgroups';
import { functionUid } from './function-users';
import { Isolation } from './replica';
import { sandboxUnavailable } from './sandbox';

/**
 * How this agent confines function processes, and a line saying so (start-up log,
 * `/system/info`). Without isolation a function runs with the platform's privileges: the log
 * says so loudly, since its code could then read the platform's data.
 */
export function isolationFor(cfg: Config, redis: Redis): { isolation?: Isolation; describe: string } {
  if (cfg.isolation === 'off') return { describe: 'off (MLFAAS_ISOLATION=off): functions run as the platform user' };
  const why = sandboxUnavailable();
  if (why) return { describe: `unavailable (${why}): functions run as the platform user` };
  const cgroups = Cgroups.detect();
  return {
    isolation: { uidFor: (ref) => functionUid(redis, ref), cgroups },
    describe: `per-function uid, private mount namespace${cgroups ? `, cgroup v${cgroups.version} per replica` : ', no writable cgroup hierarchy'}`,
  };
}
