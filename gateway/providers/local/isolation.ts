import type Redis from 'ioredis';
import { Config } from '../../config';
import { Cgroups } from '../../../node-runtime/cgroups';
import { Egress } from '../../../node-runtime/egress';
import { functionUid } from '../../../node-runtime/function-users';
import { Isolation } from './replica';
import { sandboxUnavailable } from '../../../node-runtime/sandbox';

const mib = (b: number) => `${Math.round(b / 1024 ** 2)} MiB`;

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
  // asked for and impossible is an error at start, not a quieter sandbox
  const egress = cfg.functionEgress === 'internet' ? Egress.start() : undefined;
  const net = egress ? 'egress internet: public addresses only, never the host, other replicas, private or link-local ranges' : 'egress none: loopback only';
  return {
    isolation: { uidFor: (ref) => functionUid(redis, ref), cgroups, limits: cfg.defaultLimits, egress },
    describe:
      `per-function uid, own mount, pid and network namespaces (${net}), private /tmp and /proc` +
      (cgroups ? `, cgroup v${cgroups.version} per replica (default limits: ` +
        `memory ${mib(cfg.defaultLimits.memoryBytes)}, ${cgroups.hasPids ? `${cfg.defaultLimits.pids} processes` : 'no pids controller'}, ` +
        `tmpfs ${mib(cfg.defaultLimits.tmpBytes)} each)` : ', no writable cgroup hierarchy'),
  };
}
