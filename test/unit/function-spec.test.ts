import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkImageRef, ML_BOUNDS, parseDeployment, parseMlSpec } from '../../gateway/registry/function-spec';
import { ImageStore } from '../../gateway/providers/local/image-store';
import { splitQualified } from '../../gateway/lib/names';
import { aFunction } from '../helpers/fixtures';

type M = Record<string, string>;

describe('parseMlSpec', () => {
  test.each<{ name: string; labels: M; annotations: M; want: object }>([
    { name: 'defaults', labels: {}, annotations: {}, want: { minScale: 1, maxScale: 20, scaleToZero: false, sloPercentile: 99 } },
    { name: 'min/max from labels', labels: { 'com.openfaas.scale.min': '2', 'com.openfaas.scale.max': '5' }, annotations: {},
      want: { minScale: 2, maxScale: 5 } },
    { name: 'min 0 allows zero', labels: { 'com.openfaas.scale.min': '0' }, annotations: {}, want: { minScale: 0, scaleToZero: true } },
    { name: 'min above default max raises max', labels: { 'com.openfaas.scale.min': '30' }, annotations: {}, want: { minScale: 30, maxScale: 30 } },
    {
      name: 'ML fields from annotations',
      labels: {},
      annotations: { 'mlfaas.slo.latency_ms': '150', 'mlfaas.slo.percentile': '95', 'mlfaas.batch.max': '8', 'mlfaas.model': 'resnet',
        'mlfaas.dataset': 'd.csv' },
      want: { sloLatencyMs: 150, sloPercentile: 95, maxBatchSize: 8, model: 'resnet', dataset: 'd.csv' },
    },
    { name: 'annotations win over labels', labels: { 'mlfaas.batch.max': '4' }, annotations: { 'mlfaas.batch.max': '16' }, want: { maxBatchSize: 16 } },
  ])('$name', ({ labels, annotations, want }) => {
    expect(parseMlSpec(labels, annotations)).toEqual(expect.objectContaining(want));
  });

  test.each<{ name: string; labels: M; msg: RegExp }>([
    { name: 'non-integer min', labels: { 'com.openfaas.scale.min': 'one' }, msg: /labels\.com\.openfaas\.scale\.min: "one" is not an integer/ },
    { name: 'max 0', labels: { 'com.openfaas.scale.max': '0' }, msg: /scale\.max: 0 is below the minimum 1/ },
    { name: 'min > max', labels: { 'com.openfaas.scale.min': '3', 'com.openfaas.scale.max': '2' }, msg: /min_scale 3 exceeds max_scale 2/ },
    { name: 'SLO not a number', labels: { 'mlfaas.slo.latency_ms': 'fast' }, msg: /"fast" is not a number/ },
    { name: 'percentile 0', labels: { 'mlfaas.slo.percentile': '0' }, msg: /must be in \(0, 100\]/ },
  ])('rejects $name', ({ labels, msg }) => {
    expect(() => parseMlSpec(labels, {})).toThrow(msg);
  });
});

describe('parseDeployment', () => {
  it('accepts what faas-cli sends and fills defaults', () => {
    const s = parseDeployment({
      service: 'sentiment',
      image: 'ghcr.io/example/sentiment:0.1.0',
      envProcess: 'python3 index.py',
      envVars: { MODEL: 'distilbert' },
      constraints: ['node.platform.os == linux'],
      secrets: ['hf-token'],
      labels: { 'com.openfaas.scale.min': '1', 'com.openfaas.scale.max': '5' },
      annotations: { topic: 'ml' },
      limits: { memory: '512Mi', cpu: '1' },
      requests: { memory: '128Mi', cpu: '100m' },
      readOnlyRootFilesystem: true,
      unknownField: 'ignored',
    });
    expect(s).toEqual(expect.objectContaining({ namespace: 'openfaas-fn', envProcess: 'python3 index.py', secrets: ['hf-token'],
      readOnlyRootFilesystem: true }));
    expect(s.ml).toEqual(expect.objectContaining({ minScale: 1, maxScale: 5 }));
    expect(s).not.toHaveProperty('unknownField');
  });

  it('keeps a namespace and treats an empty one as the default', () => {
    expect(parseDeployment({ ...aFunction('f').build(), namespace: 'dev' }).namespace).toBe('dev');
    expect(parseDeployment({ ...aFunction('f').build(), namespace: '' }).namespace).toBe('openfaas-fn');
  });
});

describe('upper bounds of the ML fields', () => {
  const HUGE = '100000000000000000000';
  test.each<{ key: string; max: number; extra: M }>([
    { key: 'com.openfaas.scale.min', max: ML_BOUNDS.scale, extra: { 'com.openfaas.scale.max': String(ML_BOUNDS.scale) } },
    { key: 'com.openfaas.scale.max', max: ML_BOUNDS.scale, extra: {} },
    { key: 'mlfaas.batch.max', max: ML_BOUNDS.batch, extra: {} },
    { key: 'mlfaas.max_inflight', max: ML_BOUNDS.inflight, extra: {} },
  ])('$key: $max accepted, $max + 1 and 1e20 refused naming the field', ({ key, max, extra }) => {
    expect(() => parseMlSpec({ ...extra, [key]: String(max) }, {})).not.toThrow();
    for (const v of [String(max + 1), HUGE]) {
      expect(() => parseMlSpec({ ...extra, [key]: v }, {})).toThrow(new RegExp(`labels\\.${key.replace(/\./g, '\\.')}: \\d+ is above the maximum ${max}`));
    }
  });
});

describe('paths in mlfaas.model and mlfaas.dataset', () => {
  test.each([
    { v: 'data/digits.csv', ok: true },
    { v: 'models/a..b.onnx', ok: true },
    { v: '/etc/passwd', ok: false },
    { v: '../../etc/passwd', ok: false },
    { v: 'data/../../x', ok: false },
    { v: 'data\\..\\x', ok: false },
    { v: '', ok: false },
    { v: 'a\u0000b', ok: false },
  ])('$v → ok=$ok', ({ v, ok }) => {
    for (const key of ['mlfaas.model', 'mlfaas.dataset']) {
      const run = () => parseMlSpec({}, { [key]: v });
      if (ok) expect(run).not.toThrow();
      else expect(run).toThrow(`annotations.${key}`);
    }
  });
});

describe('checkImageRef', () => {
  test.each(['test/echo-http:1', 'ghcr.io/openfaas/alpine:latest', 'localhost:5000/x/y:1.0', 'x@sha256:abc', 'my..image:1', '.hidden:1'])('accepts %s', (v) => {
    expect(checkImageRef(v)).toBe(v);
  });
  test.each(['.', '..', './x', '../x', 'x/..', 'x/../..', 'a/./b', '/etc', '/abs/img:1', 'a//b', 'x/', '..:1', '.:1', '..@sha256:0', 'a b', 'a\\b', 'a\nb',
    '', '  ', 'x'.repeat(256)])(
    'refuses %j with field image',
    (v) => {
      expect(() => checkImageRef(v)).toThrow(/^image: /);
    },
  );
  test.each([7, null, [], {}])('refuses non-string %j', (v) => expect(() => checkImageRef(v)).toThrow(/^image: must be a non-empty string/));
});

describe('ImageStore.dirOf', () => {
  const root = mkdtempSync(join(tmpdir(), 'mlfaas-store-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const store = new ImageStore(root);
  test.each(['x', 'ghcr.io/a/b:1', '../../../etc', 'a/../../b', '...'])('%s stays a child of the store', (img) => {
    expect(dirname(store.dirOf(img))).toBe(root);
  });
  test.each(['.', '..', ''])('%j is refused', (img) => expect(() => store.dirOf(img)).toThrow(/does not name a directory inside the image store/));
});

describe('splitQualified', () => {
  test.each([
    { seg: 'echo', want: { name: 'echo', namespace: 'openfaas-fn' } },
    { seg: 'echo.dev', want: { name: 'echo', namespace: 'dev' } },
    { seg: 'sentiment.openfaas-fn', want: { name: 'sentiment', namespace: 'openfaas-fn' } },
  ])('$seg', ({ seg, want }) => expect(splitQualified(seg)).toEqual(want));
});
