import { checkCallbackUrl, parseAllowList } from '../../gateway/async/callback-policy';
import { loadConfig } from '../../gateway/config';

describe('checkCallbackUrl', () => {
  test.each([
    // accepted
    { url: 'http://127.0.0.1:9999/cb', allow: [], ok: true },
    { url: 'https://hooks.example.com/x?y=1', allow: [], ok: true },
    { url: 'http://[::1]:8080/cb', allow: [], ok: true },
    { url: 'http://169.253.255.255/', allow: [], ok: true },
    { url: 'http://169.255.0.1/', allow: [], ok: true },
    { url: 'http://[fec0::1]/', allow: [], ok: true },
    { url: 'http://metadata.example.com/', allow: [], ok: true },
    // unparsable
    { url: 'not a url', allow: [], ok: false, why: /not an absolute URL/ },
    { url: 'http://[::1', allow: [], ok: false, why: /not an absolute URL/ },
    { url: '/relative/cb', allow: [], ok: false, why: /not an absolute URL/ },
    { url: 'http://', allow: [], ok: false, why: /not an absolute URL/ },
    // schemes
    { url: 'file:///etc/passwd', allow: [], ok: false, why: /scheme "file"/ },
    { url: 'gopher://127.0.0.1:6379/_INFO', allow: [], ok: false, why: /scheme "gopher"/ },
    { url: 'ftp://example.com/x', allow: [], ok: false, why: /scheme "ftp"/ },
    { url: 'javascript:alert(1)', allow: [], ok: false, why: /scheme "javascript"/ },
    { url: 'data:text/plain,hi', allow: [], ok: false, why: /scheme "data"/ },
    { url: 'ws://example.com/', allow: [], ok: false, why: /scheme "ws"/ },
    // link-local and metadata, however spelled
    { url: 'http://169.254.169.254/latest/meta-data/', allow: [], ok: false, why: /link-local/ },
    { url: 'http://169.254.0.1:8080/', allow: [], ok: false, why: /link-local/ },
    { url: 'https://169.254.255.255/', allow: [], ok: false, why: /link-local/ },
    { url: 'http://2852039166/', allow: [], ok: false, why: /link-local/ }, // decimal 169.254.169.254
    { url: 'http://0xa9fea9fe/', allow: [], ok: false, why: /link-local/ },
    { url: 'http://0251.0376.0251.0376/', allow: [], ok: false, why: /link-local/ },
    { url: 'http://[fe80::1]/', allow: [], ok: false, why: /link-local/ },
    { url: 'http://[FEBF:ffff::1]:80/', allow: [], ok: false, why: /link-local/ },
    { url: 'http://[::ffff:169.254.169.254]/', allow: [], ok: false, why: /link-local/ },
    { url: 'http://[fd00:ec2::254]/', allow: [], ok: false, why: /metadata/ },
    { url: 'http://metadata.google.internal/computeMetadata/v1/', allow: [], ok: false, why: /metadata/ },
    { url: 'http://METADATA.google.internal./', allow: [], ok: false, why: /metadata/ },
    { url: 'http://metadata.goog/', allow: [], ok: false, why: /metadata/ },
    // refused even when listed
    { url: 'http://169.254.169.254/', allow: ['169.254.169.254'], ok: false, why: /link-local/ },
    // allow-list
    { url: 'http://cb.internal:9000/x', allow: ['cb.internal'], ok: true },
    { url: 'http://cb.internal:9000/x', allow: ['cb.internal:9000'], ok: true },
    { url: 'http://cb.internal/x', allow: ['cb.internal:80'], ok: true },
    { url: 'https://cb.internal/x', allow: ['cb.internal:443'], ok: true },
    { url: 'http://[::1]:7000/', allow: ['[::1]:7000'], ok: true },
    { url: 'http://[::1]:7000/', allow: ['[::1]'], ok: true },
    { url: 'http://cb.internal:9001/x', allow: ['cb.internal:9000'], ok: false, why: /not in MLFAAS_CALLBACK_ALLOW/ },
    { url: 'http://evil.example/x', allow: ['cb.internal', '127.0.0.1'], ok: false, why: /not in MLFAAS_CALLBACK_ALLOW/ },
    { url: 'http://cb.internal.evil.example/', allow: ['cb.internal'], ok: false, why: /not in MLFAAS_CALLBACK_ALLOW/ },
  ])('$url allow=$allow → ok=$ok', ({ url, allow, ok, why }) => {
    const v = checkCallbackUrl(url, allow);
    expect(v.ok).toBe(ok);
    if (!v.ok) expect(v.reason).toMatch(why!);
  });
});

describe('parseAllowList', () => {
  test.each([
    { raw: '', want: [] },
    { raw: ' , ', want: [] },
    { raw: 'CB.internal, 127.0.0.1:9000,[::1]:80', want: ['cb.internal', '127.0.0.1:9000', '[::1]:80'] },
    { raw: 'hooks.example.com.', want: ['hooks.example.com'] },
  ])('$raw → $want', ({ raw, want }) => expect(parseAllowList(raw)).toEqual(want));

  test.each(['http://x/y', 'a b', 'x/path', 'user@host', 'host:port'])('rejects %s', (raw) => {
    expect(() => parseAllowList(raw)).toThrow(/is not a host name or host:port/);
  });
});

describe('MLFAAS_CALLBACK_ALLOW', () => {
  const base = { MLFAAS_BASIC_AUTH: 'false' };
  it('is parsed once into Config (empty by default)', () => {
    expect(loadConfig(base).async.callbackAllow).toEqual([]);
    expect(loadConfig({ ...base, MLFAAS_CALLBACK_ALLOW: 'hooks.example.com, 127.0.0.1:9000' }).async.callbackAllow)
      .toEqual(['hooks.example.com', '127.0.0.1:9000']);
  });
  it('refuses an entry that is not a host or host:port, naming the variable', () => {
    expect(() => loadConfig({ ...base, MLFAAS_CALLBACK_ALLOW: 'http://x/y' })).toThrow(/MLFAAS_CALLBACK_ALLOW: .* is not a host name or host:port/);
  });
});
