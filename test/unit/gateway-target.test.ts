/** Which gateway `mlfaas jobs` calls and with which credentials (gateway/cli/gateway-target.ts). */
import { authHeaders, faasCliLogin, resolveGatewayTarget, unreachableMessage } from '../../cli/gateway-target';

const b64 = (s: string) => Buffer.from(s).toString('base64');
/** What `faas-cli login -g http://127.0.0.1:8080 -u admin --password s3cret` writes. */
const FAAS_CLI = `auths:
- gateway: http://127.0.0.1:8080
  auth: basic
  token: ${b64('admin:s3cret')}
- gateway: https://faas.example.com
  auth: oauth2
  token: eyJhbGciOi
`;
const none = { flags: {}, env: {}, faasCliConfig: null, localPassword: null };

describe('resolveGatewayTarget', () => {
  test.each([
    { name: 'default', input: none, url: 'http://127.0.0.1:8080', from: 'default' },
    { name: 'default follows MLFAAS_PORT', input: { ...none, env: { MLFAAS_PORT: '9090' } }, url: 'http://127.0.0.1:9090', from: 'default' },
    { name: 'OPENFAAS_URL, trailing slash dropped', input: { ...none, env: { OPENFAAS_URL: 'http://gw:8080/' } }, url: 'http://gw:8080', from: 'OPENFAAS_URL' },
    { name: 'MLFAAS_GATEWAY over OPENFAAS_URL', input: { ...none, env: { OPENFAAS_URL: 'http://a:1', MLFAAS_GATEWAY: 'http://b:2' } }, url: 'http://b:2',
      from: 'MLFAAS_GATEWAY' },
    { name: '--gateway over both', input: { ...none, flags: { gateway: 'http://c:3' }, env: { OPENFAAS_URL: 'http://a:1', MLFAAS_GATEWAY: 'http://b:2' } },
      url: 'http://c:3', from: '--gateway' },
    { name: 'empty env ignored', input: { ...none, env: { MLFAAS_GATEWAY: ' ', OPENFAAS_URL: 'http://a:1' } }, url: 'http://a:1', from: 'OPENFAAS_URL' },
  ])('gateway: $name', ({ input, url, from }) => {
    const t = resolveGatewayTarget(input);
    expect(t.url).toBe(url);
    expect(t.urlFrom).toBe(from);
  });

  test.each([
    { name: 'none configured', input: none, want: undefined },
    { name: 'flags', input: { ...none, flags: { username: 'u', password: 'p' }, env: { MLFAAS_AUTH_PASSWORD: 'e' }, faasCliConfig: FAAS_CLI },
      want: { user: 'u', password: 'p', from: 'flags' } },
    { name: 'env over faas-cli login', input: { ...none, env: { MLFAAS_AUTH_USER: 'ops', MLFAAS_AUTH_PASSWORD: 'e' }, faasCliConfig: FAAS_CLI },
      want: { user: 'ops', password: 'e', from: 'env' } },
    { name: 'faas-cli login for this gateway', input: { ...none, faasCliConfig: FAAS_CLI, localPassword: 'gen' },
      want: { user: 'admin', password: 's3cret', from: 'faas-cli login' } },
    { name: 'faas-cli login saved with a trailing slash', input: { ...none, faasCliConfig: FAAS_CLI.replace('8080\n', '8080/\n') },
      want: { user: 'admin', password: 's3cret', from: 'faas-cli login' } },
    { name: 'faas-cli login of another gateway: not used', input: { ...none, env: { OPENFAAS_URL: 'http://10.0.0.5:8080' }, faasCliConfig: FAAS_CLI },
      want: undefined },
    { name: 'oauth2 entry: not basic', input: { ...none, env: { OPENFAAS_URL: 'https://faas.example.com' }, faasCliConfig: FAAS_CLI }, want: undefined },
    { name: 'local generated password', input: { ...none, localPassword: 'gen-pw\n' }, want: { user: 'admin', password: 'gen-pw', from: 'local data dir' } },
    { name: 'local password never sent to a remote gateway', input: { ...none, env: { OPENFAAS_URL: 'http://10.0.0.5:8080' }, localPassword: 'gen-pw' },
      want: undefined },
    { name: 'broken faas-cli config falls through', input: { ...none, faasCliConfig: 'auths: [ {', localPassword: 'gen-pw' },
      want: { user: 'admin', password: 'gen-pw', from: 'local data dir' } },
  ])('credentials: $name', ({ input, want }) => {
    expect(resolveGatewayTarget(input).credentials).toEqual(want);
  });

  test('basic auth header', () => {
    const t = resolveGatewayTarget({ ...none, faasCliConfig: FAAS_CLI });
    expect(authHeaders(t)).toEqual({ authorization: `Basic ${b64('admin:s3cret')}` });
    expect(authHeaders(resolveGatewayTarget(none))).toEqual({});
  });

  test('faasCliLogin keeps a password with colons', () => {
    expect(faasCliLogin(`auths:\n- gateway: http://x\n  auth: basic\n  token: ${b64('a:b:c')}\n`, 'http://x')).toEqual({ user: 'a', password: 'b:c' });
  });

  test('the unreachable message names the URL, where it came from, and how to set it', () => {
    const m = unreachableMessage(resolveGatewayTarget({ ...none, env: { OPENFAAS_URL: 'http://gw:1' } }), 'ECONNREFUSED');
    expect(m).toMatch(/http:\/\/gw:1 \(from OPENFAAS_URL\): ECONNREFUSED/);
    expect(m).toMatch(/--gateway URL, MLFAAS_GATEWAY=URL or OPENFAAS_URL=URL/);
  });
});
