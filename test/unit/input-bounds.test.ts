/**
 * The bounds of deploy and secret inputs (issue 21, item 11), at their edges: what is just
 * inside is accepted, what is just outside is refused naming the field. The refusals over HTTP
 * are in the bad-input corpus (`test/gateway/bad-input/cases-bounds.ts`).
 */
import { totalmem } from 'node:os';
import { PlatformError } from '../../gateway/errors';
import { cpuQuantityCores, memoryQuantityBytes } from '../../gateway/lib/quantity';
import { DEPLOY_BOUNDS, parseDeployment } from '../../gateway/registry/function-spec';
import { asGoJsonString, parseSecret } from '../../gateway/registry/secrets';
import { aFunction } from '../helpers/fixtures';

const base = aFunction('f').build();
/** The field a deployment is refused on, or 'ok'. */
function verdict(over: Record<string, unknown>): string {
  try {
    parseDeployment({ ...base, ...over });
    return 'ok';
  } catch (e) {
    if (e instanceof PlatformError) return e.field ?? '(none)';
    throw e;
  }
}
const many = (n: number, value = 'v') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value]));
const Mi = 1024 ** 2;

describe('deploy bounds', () => {
  test.each<{ name: string; over: Record<string, unknown>; want: string }>([
    // envVars
    { name: 'PATH is the function\'s own', over: { envVars: { PATH: '/tmp/x:/usr/bin' } }, want: 'ok' },
    { name: 'names with dots, dashes, lower case', over: { envVars: { 'a.b-c': '1', write_timeout: '30s', ENV: 'prod', LDAP_URL: 'ldap://x' } }, want: 'ok' },
    { name: 'an empty value', over: { envVars: { A: '' } }, want: 'ok' },
    { name: 'an empty name', over: { envVars: { '': 'x' } }, want: 'envVars' },
    { name: 'a name with =', over: { envVars: { 'A=B': 'x' } }, want: 'envVars' },
    { name: 'a name with NUL', over: { envVars: { 'A\0': 'x' } }, want: 'envVars' },
    { name: 'a value with NUL', over: { envVars: { A: 'x\0' } }, want: 'envVars.A' },
    { name: 'LD_LIBRARY_PATH', over: { envVars: { LD_LIBRARY_PATH: '/opt/lib' } }, want: 'envVars.LD_LIBRARY_PATH' },
    { name: 'LD_AUDIT', over: { envVars: { LD_AUDIT: '/tmp/a.so' } }, want: 'envVars.LD_AUDIT' },
    { name: 'GCONV_PATH', over: { envVars: { GCONV_PATH: '/tmp' } }, want: 'envVars.GCONV_PATH' },
    { name: 'an exported shell function', over: { envVars: { 'BASH_FUNC_mount%%': '() { id; }' } }, want: 'envVars.BASH_FUNC_mount%%' },
    { name: 'PORT', over: { envVars: { PORT: '80' } }, want: 'envVars.PORT' },
    { name: 'KEY=value of 128 KiB less the NUL', over: { envVars: { A: 'x'.repeat(DEPLOY_BOUNDS.envEntryBytes - 2) } }, want: 'ok' },
    { name: 'KEY=value one byte more', over: { envVars: { A: 'x'.repeat(DEPLOY_BOUNDS.envEntryBytes - 1) } }, want: 'envVars.A' },
    // limits and requests
    { name: 'memory 32Mi', over: { limits: { memory: '32Mi' } }, want: 'ok' },
    { name: 'memory one byte under 32Mi', over: { limits: { memory: String(32 * Mi - 1) } }, want: 'limits.memory' },
    { name: 'memory "0"', over: { limits: { memory: '0' } }, want: 'limits.memory' },
    { name: 'memory the host\'s', over: { limits: { memory: String(totalmem()) } }, want: 'ok' },
    { name: 'memory one byte over the host\'s', over: { limits: { memory: String(totalmem() + 1) } }, want: 'limits.memory' },
    { name: 'requests.memory 1Ki', over: { requests: { memory: '1Ki' } }, want: 'requests.memory' },
    { name: 'cpu 1m', over: { limits: { cpu: '1m' } }, want: 'ok' },
    { name: 'cpu 0.001', over: { limits: { cpu: '0.001' } }, want: 'ok' },
    { name: 'cpu 1024', over: { limits: { cpu: '1024' } }, want: 'ok' },
    { name: 'cpu "0" (not "unlimited")', over: { limits: { cpu: '0' } }, want: 'limits.cpu' },
    { name: 'cpu 0.5m', over: { limits: { cpu: '0.5m' } }, want: 'limits.cpu' },
    { name: 'cpu 1024001m', over: { limits: { cpu: '1024001m' } }, want: 'limits.cpu' },
    { name: 'cpu 99999999999', over: { limits: { cpu: '99999999999' } }, want: 'limits.cpu' },
    { name: 'requests equal to limits', over: { limits: { memory: '64Mi', cpu: '1' }, requests: { memory: '64Mi', cpu: '1000m' } }, want: 'ok' },
    { name: 'requests.memory over limits.memory', over: { limits: { memory: '64Mi' }, requests: { memory: '65Mi' } }, want: 'requests.memory' },
    { name: 'requests.cpu over limits.cpu', over: { limits: { cpu: '100m' }, requests: { cpu: '101m' } }, want: 'requests.cpu' },
    { name: 'requests without limits', over: { requests: { memory: '1Gi', cpu: '8' } }, want: 'ok' },
    // labels and annotations
    { name: '256 labels', over: { labels: many(256) }, want: 'ok' },
    { name: '257 labels', over: { labels: many(257) }, want: 'labels' },
    { name: '257 annotations', over: { annotations: many(257) }, want: 'annotations' },
    { name: 'a 317-byte key', over: { labels: { ['k'.repeat(317)]: 'v' } }, want: 'ok' },
    { name: 'a 318-byte key', over: { annotations: { ['k'.repeat(318)]: 'v' } }, want: 'annotations' },
    { name: 'a 4 KiB label value', over: { labels: { k: 'v'.repeat(4096) } }, want: 'ok' },
    { name: 'a label value of 4 KiB and a byte', over: { labels: { k: 'v'.repeat(4097) } }, want: 'labels.k' },
    { name: 'a 64 KiB annotation value', over: { annotations: { k: 'v'.repeat(65536) } }, want: 'ok' },
    { name: 'an annotation value of 64 KiB and a byte', over: { annotations: { k: 'v'.repeat(65537) } }, want: 'annotations.k' },
    { name: '4 annotations of 64 KiB (over 256 KiB with their keys)', over: { annotations: many(4, 'v'.repeat(65536)) }, want: 'annotations' },
    { name: 'an empty label key', over: { labels: { '': 'v' } }, want: 'labels' },
  ])('$name → $want', ({ over, want }) => {
    expect(verdict(over)).toBe(want);
  });

  test('quantities', () => {
    expect(memoryQuantityBytes('32Mi')).toBe(32 * Mi);
    expect(memoryQuantityBytes('1G')).toBe(1e9);
    expect(memoryQuantityBytes('1e9')).toBeUndefined();
    expect(cpuQuantityCores('500m')).toBe(0.5);
    expect(cpuQuantityCores('2')).toBe(2);
    expect(cpuQuantityCores('-1')).toBeUndefined();
  });

  test('messages say the bound', () => {
    expect(() => parseDeployment({ ...base, limits: { memory: '1Ki' } })).toThrow(/below the minimum 32Mi/);
    expect(() => parseDeployment({ ...base, limits: { cpu: '0' } })).toThrow(/below the minimum 1m/);
    expect(() => parseDeployment({ ...base, labels: many(300) })).toThrow(/300 entries; at most 256/);
    expect(() => parseDeployment({ ...base, envVars: { LD_AUDIT: 'x' } })).toThrow(/dynamic loader or the shell/);
    expect(() => parseDeployment({ ...base, envVars: { MLFAAS_SOCKET: 'x' } })).toThrow(/set by the platform/);
  });
});

describe('a secret\'s value and rawValue', () => {
  const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64');
  test.each<{ name: string; body: Record<string, unknown>; want: string }>([
    { name: 'value alone', body: { name: 's', value: 'v' }, want: 'ok' },
    { name: 'rawValue alone', body: { name: 's', rawValue: 'YQ==' }, want: 'ok' },
    // faas-cli 0.16.37 `secret create --from-file` (shared/reference/faas-cli-wire.txt)
    { name: 'both, the same text (faas-cli --from-file)', body: { name: 'k2', value: 's3cr3t', rawValue: 'czNjcjN0' }, want: 'ok' },
    { name: 'both, the same UTF-8 text', body: { name: 's', value: 'héllo ✓', rawValue: b64('héllo ✓') }, want: 'ok' },
    { name: 'both, binary as faas-cli sends it', body: { name: 's', value: 'a\ufffd\ufffdb', rawValue: b64(Buffer.from([0x61, 0xe2, 0x82, 0x62])) },
      want: 'ok' },
    { name: 'both, different', body: { name: 's', value: 'v', rawValue: 'YQ==' }, want: 'rawValue' },
    { name: 'both, binary decoded the Node way', body: { name: 's', value: 'a\ufffdb', rawValue: b64(Buffer.from([0x61, 0xe2, 0x82, 0x62])) },
      want: 'rawValue' },
  ])('$name → $want', ({ body, want }) => {
    let got = 'ok';
    try {
      parseSecret(body, 'openfaas-fn', true);
    } catch (e) {
      got = (e as PlatformError).field ?? '(none)';
    }
    expect(got).toBe(want);
  });

  test.each<{ bytes: number[]; want: string }>([
    // Go: utf8.DecodeRune returns (RuneError, 1) for each byte of an invalid sequence
    { bytes: [0x68, 0x69], want: 'hi' },
    { bytes: [0xc3, 0xa9], want: 'é' },
    { bytes: [0xf0, 0x9f, 0x98, 0x80], want: '😀' },
    { bytes: [0xff], want: '\ufffd' },
    { bytes: [0xe2, 0x82], want: '\ufffd\ufffd' },
    { bytes: [0xed, 0xa0, 0x80], want: '\ufffd\ufffd\ufffd' }, // an encoded surrogate
    { bytes: [0xc0, 0xaf], want: '\ufffd\ufffd' }, // overlong
    { bytes: [0xf4, 0x90, 0x80, 0x80], want: '\ufffd\ufffd\ufffd\ufffd' }, // above U+10FFFF
  ])('Go JSON string of $bytes', ({ bytes, want }) => {
    expect(asGoJsonString(Buffer.from(bytes))).toBe(want);
  });
});
