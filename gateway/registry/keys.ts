import { FunctionRef, refKey } from '../lib/names';

/** Every Redis key the platform uses, in one place. `k` is `namespace/name`. */
export const keys = {
  functions: 'mlfaas:functions', // hash k → FunctionRecord JSON
  desired: 'mlfaas:desired', // hash k → desired replica count
  invocations: 'mlfaas:invocations', // hash k → total invocations
  replicas: (r: FunctionRef) => `mlfaas:replicas:${refKey(r)}`, // hash replicaId → ReplicaInfo JSON
  secrets: (namespace: string) => `mlfaas:secrets:${namespace}`, // hash name → value
  logs: (r: FunctionRef) => `mlfaas:logs:${refKey(r)}`, // stream of log lines
  metrics: (r: FunctionRef, sec: number) => `mlfaas:metrics:${refKey(r)}:${sec}`, // hash per second
  agentLock: 'mlfaas:agent-lock',
  enforcement: 'mlfaas:enforcement', // what the node agent enforces per replica (Enforcement JSON), for processes without it
  evict: (r: FunctionRef) => `mlfaas:evict:${refKey(r)}`, // set of replica ids to stop first on scale-down
  servedVersion: (r: FunctionRef) => `mlfaas:served-version:${refKey(r)}`, // the version that last served the whole function (JSON)
  namespaces: 'mlfaas:namespaces', // set of namespaces that have held functions or secrets
  changes: 'mlfaas:changes', // pub/sub channel, message = JSON Change
  asyncQueue: 'mlfaas-async', // BullMQ queue name
  functionUids: 'mlfaas:function-uids', // hash k → the unprivileged uid its processes run as
  functionUidNext: 'mlfaas:function-uid-next', // counter for the next uid
  authPassword: 'mlfaas:auth-password', // the generated gateway password, when none is configured
};

/** Autoscaler-set replica settings (weight, quota), kept apart from the agent-written replica table. */
export const replicaSettingsKey = (r: FunctionRef) => `mlfaas:replica-settings:${refKey(r)}`;

/** HSET KEYS[1] ARGV[1] ARGV[2] only if the field exists; returns 1 if set, else 0. */
export const HSET_IF_EXISTS =
  "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) return 1 end return 0";
