/**
 * Bounds on deploy inputs (issue 21, item 11): envVars names and values, resource quantities,
 * the size of labels and annotations, secrets that must exist, scaling a training function, a
 * secret's value and rawValue, and the jobs API's field for an unknown function. Run by
 * `bad-input.test.ts`, whose set-up holds the secret `dup` (openfaas-fn) and `only-there`
 * (namespace `elsewhere`) and the functions `exists` and `trainer`.
 */
import { aFunction } from '../../helpers/fixtures';
import { Case, describeValue, invalid, notFound } from './case';

const good = aFunction('good').minScale(0).build();
const body = (over: Record<string, unknown>) => ({ ...good, ...over });
type Want = Omit<Case, 'name' | 'method' | 'path'>;
const deploy = (name: string, b: unknown, want: Want, method = 'POST'): Case => ({
  name: `${method === 'POST' ? 'deploy' : 'update'}: ${name}`,
  method,
  path: '/system/functions',
  body: b,
  ...want,
});
/** A deploy and an update of `exists`, both refused the same way. */
const both = (name: string, over: Record<string, unknown>, want: Want): Case[] => [
  deploy(name, body(over), want),
  deploy(name, body({ ...over, service: 'exists' }), want, 'PUT'),
];
const many = (n: number, value = 'v', prefix = 'k') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, value]));
const KiB = 1024;

function envCases(): Case[] {
  const reserved = [
    'LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT', 'LD_BIND_NOW', 'LD_DEBUG_OUTPUT', 'LD_',
    'GCONV_PATH', 'GETCONF_DIR', 'LOCPATH', 'NLSPATH', 'MALLOC_TRACE', 'HOSTALIASES',
    'BASH_ENV', 'SHELLOPTS', 'BASHOPTS', 'BASH_FUNC_mount%%',
    'MLFAAS_TOKEND_SOCKET', 'MLFAAS_SOCKET', 'TL_DEVICE', 'CUDA_MPS_PIPE_DIRECTORY', 'HOST', 'PORT', 'HOME',
  ];
  return [
    ...['', '=', 'A=B', '=A', 'A\0B', '\0'].flatMap((k) => both(`envVars key ${describeValue(k)}`, { envVars: { [k]: 'x' } }, invalid('envVars'))),
    ...['x\0y', '\0', 'ok\0'].flatMap((v) => both(`envVars value ${describeValue(v)}`, { envVars: { A: v } }, invalid('envVars.A'))),
    ...reserved.map((k) => deploy(`envVars reserved ${k}`, body({ envVars: { [k]: '/tmp/x' } }), invalid(`envVars.${k}`))),
    ...both('envVars LD_LIBRARY_PATH', { envVars: { LD_LIBRARY_PATH: '/tmp/mlfaas-evil' } }, invalid('envVars.LD_LIBRARY_PATH')),
    deploy('envVars one KEY=value over 128 KiB', body({ envVars: { A: 'x'.repeat(128 * KiB) } }), invalid('envVars.A')),
    deploy('envVars 1.1 MB in all', body({ envVars: many(9, 'x'.repeat(120 * KiB), 'V') }), invalid('envVars')),
  ];
}

function resourceCases(): Case[] {
  const memory = ['0', '1', '1Ki', '1k', '1M', '31Mi', '33554431', '0.03Gi', '1000Ti', '99999999999Gi'];
  const cpu = ['0', '0m', '0.0', '0.0001', '0.5m', '1025', '2000000m', '99999999999'];
  return [
    ...memory.flatMap((v) => both(`limits.memory ${describeValue(v)}`, { limits: { memory: v } }, invalid('limits.memory'))),
    ...['1Ki', '0', '1000Ti'].map((v) => deploy(`requests.memory ${describeValue(v)}`, body({ requests: { memory: v } }), invalid('requests.memory'))),
    ...cpu.flatMap((v) => both(`limits.cpu ${describeValue(v)}`, { limits: { cpu: v } }, invalid('limits.cpu'))),
    ...['0', '99999999999'].map((v) => deploy(`requests.cpu ${describeValue(v)}`, body({ requests: { cpu: v } }), invalid('requests.cpu'))),
    deploy('requests.memory above limits.memory', body({ limits: { memory: '64Mi' }, requests: { memory: '128Mi' } }), invalid('requests.memory')),
    deploy('requests.cpu above limits.cpu', body({ limits: { cpu: '500m' }, requests: { cpu: '1' } }), invalid('requests.cpu')),
  ];
}

function mapCases(): Case[] {
  const out: Case[] = [];
  for (const field of ['labels', 'annotations'] as const) {
    const valueMax = field === 'labels' ? 4 * KiB : 64 * KiB;
    out.push(
      ...both(`${field}: 257 entries`, { [field]: many(257) }, invalid(field)),
      deploy(`${field}: 10,000 entries`, body({ [field]: many(10_000) }), invalid(field)),
      ...both(`${field}: a 318-byte key`, { [field]: { ['k'.repeat(318)]: 'v' } }, invalid(field)),
      deploy(`${field}: a 100 kB key`, body({ [field]: { ['k'.repeat(100_000)]: 'v' } }), invalid(field)),
      deploy(`${field}: an empty key`, body({ [field]: { '': 'v' } }), invalid(field)),
      deploy(`${field}: a key with a newline`, body({ [field]: { 'a\nb': 'v' } }), invalid(field)),
      deploy(`${field}: a key with NUL`, body({ [field]: { 'a\0b': 'v' } }), invalid(field)),
      ...both(`${field}: a value one byte over ${valueMax}`, { [field]: { k: 'v'.repeat(valueMax + 1) } }, invalid(`${field}.k`)),
      deploy(`${field}: a value of ${valueMax / 2 + 1} two-byte characters`, body({ [field]: { k: 'é'.repeat(valueMax / 2 + 1) } }), invalid(`${field}.k`)),
      deploy(`${field}: a 1 MiB value`, body({ [field]: { k: 'v'.repeat(1024 * KiB) } }), invalid(`${field}.k`)),
    );
  }
  out.push(...both('annotations: 300 KiB in all', { annotations: many(5, 'v'.repeat(60 * KiB)) }, invalid('annotations')));
  return out;
}

function secretCases(): Case[] {
  const s = (name: string, b: unknown, want: Want, method = 'POST'): Case =>
    ({ name: `${method} secret: ${name}`, method, path: '/system/secrets', body: b, ...want });
  return [
    ...both('a secret that does not exist', { secrets: ['missing'] }, invalid('secrets')),
    ...both('a secret only in another namespace', { secrets: ['only-there'] }, invalid('secrets')),
    deploy('a secret of openfaas-fn, deployed into dev', body({ namespace: 'dev', secrets: ['dup'] }), invalid('secrets')),
    ...both('one secret of two missing', { secrets: ['dup', 'missing'] }, invalid('secrets')),
    // an update of an unknown function is a 404 first, whatever it names: faas-cli then POSTs
    deploy('unknown function naming a missing secret', body({ service: 'ghost', secrets: ['missing'] }), notFound, 'PUT'),
    ...(['POST', 'PUT'] as const).flatMap((m) => [
      s('value and a different rawValue', { name: 'dup', value: 'v', rawValue: 'YQ==' }, invalid('rawValue'), m),
      s('value and a longer rawValue', { name: 'dup', value: 'a', rawValue: 'YWI=' }, invalid('rawValue'), m),
      s('empty value and a rawValue', { name: 'dup', value: '', rawValue: 'YQ==' }, invalid('rawValue'), m),
    ]),
  ];
}

function scaleCases(): Case[] {
  const scale = (name: string, seg: string, b: unknown, want: Want): Case =>
    ({ name: `scale: ${name}`, method: 'POST', path: `/system/scale-function/${seg}`, body: b, ...want });
  return [
    scale('a training function to 2', 'trainer', { replicas: 2 }, invalid('name')),
    scale('a training function to 0', 'trainer', { replicas: 0 }, invalid('name')),
  ];
}

export function boundsCases(): Case[] {
  return [...envCases(), ...resourceCases(), ...mapCases(), ...secretCases(), ...scaleCases()];
}
