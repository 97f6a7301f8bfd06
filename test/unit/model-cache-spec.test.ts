/**
 * `mlfaas.model.uri` / `mlfaas.model.sha256` at deploy (issue 25, part 4): what is accepted, and
 * every bad-input case (test/gateway/bad-input/cases-model-uri.ts) refused naming its field.
 */
import { PlatformError } from '../../gateway/errors';
import { parseDeployment } from '../../gateway/registry/function-spec';
import { parseModelSource } from '../../gateway/registry/model-uri-spec';
import { aFunction } from '../helpers/fixtures';
import { modelUriCases } from '../gateway/bad-input/cases-model-uri';

const SHA = 'AB'.repeat(32);
const src = (a: Record<string, string>) => parseDeployment({ ...aFunction('f').build(), annotations: a }).ml.modelSource;

describe('model source annotations', () => {
  test('file:// names a path in the store; http(s) kept as given; sha256 lower-cased', () => {
    expect(src({ 'mlfaas.model.uri': 'file:///digits/v1.onnx', 'mlfaas.model.sha256': SHA })).toEqual({
      uri: 'file:///digits/v1.onnx', scheme: 'file', storePath: 'digits/v1.onnx', sha256: SHA.toLowerCase() });
    expect(src({ 'mlfaas.model.uri': 'file://localhost/m%20x.onnx', 'mlfaas.model.sha256': SHA })?.storePath).toBe('m x.onnx');
    expect(src({ 'mlfaas.model.uri': 'https://models.example:8443/m/v2.onnx?rev=2', 'mlfaas.model.sha256': SHA })).toEqual({
      uri: 'https://models.example:8443/m/v2.onnx?rev=2', scheme: 'https', sha256: SHA.toLowerCase() });
    expect(src({})).toBeUndefined();
    // labels are read too (as for every ML field), annotations first
    const d = parseDeployment({ ...aFunction('f').build(), labels: { 'mlfaas.model.uri': 'http://a/x.onnx', 'mlfaas.model.sha256': SHA } });
    expect(d.ml.modelSource?.uri).toBe('http://a/x.onnx');
  });

  test('a missing sha256 is named where the uri was set', () => {
    const get = (k: string) => (k === 'mlfaas.model.uri' ? { value: 'http://a/x', field: `labels.${k}` } : { value: undefined, field: `labels.${k}` });
    expect(() => parseModelSource(get)).toThrow(expect.objectContaining({ field: 'labels.mlfaas.model.sha256' }));
  });

  const cases = modelUriCases();
  test(`every bad-input case (${cases.length}) is a 400 naming its field`, () => {
    expect(cases.length).toBeGreaterThan(30);
    const wrong: string[] = [];
    for (const c of cases) {
      try {
        parseDeployment(c.body);
        wrong.push(`${c.name}: accepted`);
      } catch (e) {
        const pe = e as PlatformError;
        if (!(pe instanceof PlatformError) || pe.field !== c.field || c.status !== 400) wrong.push(`${c.name}: ${pe.field} ${pe.message}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
