import { loadConfig } from '../../gateway/config';
import { toHttp, PlatformError, ErrorCode } from '../../gateway/errors';

describe('loadConfig', () => {
  it('has defaults', () => {
    const c = loadConfig({});
    expect(c).toEqual(expect.objectContaining({ host: '127.0.0.1', port: 8080, agent: true, queueDepth: 512 }));
    // secure by default: auth on, the password generated at first start (auth-credentials)
    expect(c.auth).toEqual({ enabled: true, user: 'admin', password: '' });
    expect(c.isolation).toBe('auto');
    // the SLO guard: a 5 s window; its hold is the guard's own default unless set
    expect(c.autoscaler.sloGuardS).toBe(5);
    expect(c.autoscaler.sloGuardHoldS).toBeUndefined();
    expect(loadConfig({ MLFAAS_SLO_GUARD_HOLD_S: '0' }).autoscaler.sloGuardHoldS).toBe(0);
  });
  test.each([
    { env: { MLFAAS_PORT: 'eighty' }, msg: /MLFAAS_PORT="eighty" must be an integer/ },
    { env: { MLFAAS_QUEUE_DEPTH: '-1' }, msg: /MLFAAS_QUEUE_DEPTH="-1" must be an integer ≥ 0/ },
    { env: { MLFAAS_AGENT: 'perhaps' }, msg: /MLFAAS_AGENT="perhaps" must be true or false/ },
    { env: { MLFAAS_AUTH_USER: 'a:b' }, msg: /user must be non-empty and hold no ":"/ },
    { env: { MLFAAS_ISOLATION: 'maybe' }, msg: /MLFAAS_ISOLATION="maybe" must be one of auto, off/ },
    { env: { MLFAAS_SLO_GUARD_S: '0' }, msg: /MLFAAS_SLO_GUARD_S="0" must be an integer ≥ 1/ },
    { env: { MLFAAS_SLO_GUARD_HOLD_S: 'long' }, msg: /MLFAAS_SLO_GUARD_HOLD_S="long" must be a number of seconds in \[0, 3600\]/ },
  ])('rejects $env', ({ env, msg }) => expect(() => loadConfig(env)).toThrow(msg));
});

describe('toHttp', () => {
  test.each([
    { err: new PlatformError(ErrorCode.QueueFull, 'full', undefined, { 'Retry-After': '1' }), status: 429, code: 'queue_full' },
    { err: new PlatformError(ErrorCode.ImageNotFound, 'no image', 'image'), status: 400, code: 'image_not_found' },
    { err: Object.assign(new Error('bad'), { type: 'entity.parse.failed', status: 400 }), status: 400, code: 'malformed_json' },
    { err: Object.assign(new Error('big'), { type: 'entity.too.large', status: 413 }), status: 413, code: 'payload_too_large' },
    { err: new Error('boom'), status: 500, code: 'internal' },
  ])('$code → $status', ({ err, status, code }) => {
    const h = toHttp(err);
    expect(h.status).toBe(status);
    expect(h.body.error.code).toBe(code);
  });
});
