/**
 * Deploy and update with bad `mlfaas.model.uri` / `mlfaas.model.sha256` (issue 25, part 4): each a
 * 400 naming the annotation (or label) that is wrong. Written by engineer E; registered in
 * bad-input.test.ts by its owner.
 */
import { aFunction } from '../../helpers/fixtures';
import { Case, describeValue, invalid } from './case';

const URI = 'mlfaas.model.uri';
const SHA = 'mlfaas.model.sha256';
const GOOD_SHA = 'ab'.repeat(32);

const BAD_URIS = [
  '', ' ', 'models/m.onnx', '/abs/m.onnx', 'ftp://h/m.onnx', 's3://bucket/m.onnx', 'javascript:alert(1)', 'data:,x',
  'file:///../etc/passwd', 'file:///a/../../x.onnx', 'file:///a/%2e%2e/%2e%2e/x', 'file:///./m.onnx', 'file:///', 'file://otherhost/m.onnx',
  'file:///m.onnx?x=1', 'file:///a%00b', 'file:///a%5c..%5cb', 'file:///%zz',
  'https://user:pass@models.example/m.onnx', 'http://token@models.example/m.onnx', 'https://models.example/m.onnx#frag', 'http://',
  'https://models.example/a b.onnx', 'https://models.example/\nm.onnx', `https://models.example/${'x'.repeat(2100)}`,
];
const BAD_SHAS = ['', 'abc', 'g'.repeat(64), 'ab'.repeat(31), 'ab'.repeat(33), ` ${'ab'.repeat(31)}a`, 'sha256:' + 'ab'.repeat(32)];

export function modelUriCases(): Case[] {
  const cases: Case[] = [];
  const deploy = (name: string, where: 'labels' | 'annotations', kv: Record<string, string>, field: string, method = 'POST'): Case => {
    const b = aFunction(method === 'POST' ? 'good' : 'exists').minScale(0).build();
    return { name: `${method === 'POST' ? 'deploy' : 'update'}: ${name}`, method, path: '/system/functions', body: { ...b, [where]: kv }, ...invalid(field) };
  };
  for (const u of BAD_URIS) {
    cases.push(deploy(`annotation ${URI}=${describeValue(u)}`, 'annotations', { [URI]: u, [SHA]: GOOD_SHA }, `annotations.${URI}`));
  }
  cases.push(deploy(`label ${URI}=ftp`, 'labels', { [URI]: 'ftp://h/m.onnx', [SHA]: GOOD_SHA }, `labels.${URI}`, 'PUT'));
  for (const s of BAD_SHAS) {
    cases.push(deploy(`annotation ${SHA}=${describeValue(s)}`, 'annotations', { [URI]: 'https://models.example/m.onnx', [SHA]: s }, `annotations.${SHA}`));
  }
  cases.push(
    deploy(`${URI} without ${SHA}`, 'annotations', { [URI]: 'https://models.example/m.onnx' }, `annotations.${SHA}`),
    deploy(`${URI} without ${SHA} (update)`, 'annotations', { [URI]: 'file:///m.onnx' }, `annotations.${SHA}`, 'PUT'),
    deploy(`${SHA} without ${URI}`, 'annotations', { [SHA]: GOOD_SHA }, `annotations.${SHA}`),
  );
  return cases;
}
