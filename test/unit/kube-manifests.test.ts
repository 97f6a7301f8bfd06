/** A function's Kubernetes objects follow faas-netes' conventions and carry mlfaas' GPU scheduling. */
import { deploymentFor, nodeSelectorOf, serviceFor, statusOf } from '../../gateway/providers/kubernetes/manifests';
import { parseDeployment } from '../../gateway/registry/function-spec';
import { aFunction } from '../helpers/fixtures';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('kubernetes manifests', () => {
  test.each([
    { constraints: ['node.kubernetes.io/instance-type=gpu'], want: { 'node.kubernetes.io/instance-type': 'gpu' } },
    { constraints: ['zone == a', 'disk=ssd'], want: { zone: 'a', disk: 'ssd' } },
    { constraints: [], want: {} },
  ])('constraints $constraints → nodeSelector', ({ constraints, want }) => {
    expect(nodeSelectorOf(constraints)).toEqual(want);
  });

  it('labels, env, port, probes and secrets as faas-netes makes them', () => {
    const spec = parseDeployment({ ...aFunction('f1').label('team', 'ml').env('A', '1').fprocess('node x.js').secrets('api-key').minScale(2).build(),
      readOnlyRootFilesystem: true });
    const d = deploymentFor(spec, 2) as Any;
    expect(d.metadata.labels).toEqual(expect.objectContaining({ faas_function: 'f1', team: 'ml' }));
    expect(d.metadata.annotations['prometheus.io.scrape']).toBe('false');
    expect(d.spec.selector).toEqual({ matchLabels: { faas_function: 'f1' } });
    expect(d.spec.replicas).toBe(2);
    const c = d.spec.template.spec.containers[0];
    expect(c.env)
      .toEqual(expect.arrayContaining([{ name: 'A', value: '1' }, { name: 'fprocess', value: 'node x.js' },
        { name: 'MLFAAS_REPLICA_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }]));
    expect(c.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    expect(c.readinessProbe.httpGet).toEqual({ path: '/_/ready', port: 8080 });
    expect(c.volumeMounts)
      .toEqual(expect.arrayContaining([{ name: 'f1-projected-secrets', mountPath: '/var/openfaas/secrets', readOnly: true },
        { name: 'temp', mountPath: '/tmp' }]));
    expect(d.spec.template.spec.volumes[0]).toEqual({ name: 'f1-projected-secrets', projected: { sources: [{ secret: { name: 'api-key' } }] } });
    expect(d.spec.template.spec.automountServiceAccountToken).toBe(false);
    expect(serviceFor(spec))
      .toEqual(expect.objectContaining({ spec: expect.objectContaining({ selector: { faas_function: 'f1' },
        ports: [expect.objectContaining({ port: 8080 })] }) }));
  });

  it('schedules a whole GPU through nvidia.com/gpu and a fractional one through the node agent', () => {
    const whole = deploymentFor(parseDeployment(aFunction('g1').label('mlfaas.gpu', '1').build()), 1) as Any;
    const ps = whole.spec.template.spec;
    expect(ps.containers[0].resources.limits['nvidia.com/gpu']).toBe('1');
    expect(ps.runtimeClassName).toBe('nvidia');
    expect(ps.tolerations).toEqual([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
    expect(ps.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0])
      .toEqual({ key: 'mlfaas.io/vc', operator: 'In', values: ['inference'] });
    const part = deploymentFor(parseDeployment(aFunction('g2').label('mlfaas.gpu', '1').label('mlfaas.gpu.sm_share', '0.25').build()), 1) as Any;
    const pp = part.spec.template.spec;
    expect(pp.containers[0].resources.limits?.['nvidia.com/gpu']).toBeUndefined();
    expect(part.spec.template.metadata.annotations['mlfaas.io/gpu-share']).toBe('0.25');
    expect(pp.containers[0].env).toEqual(expect.arrayContaining([{ name: 'LD_PRELOAD', value: '/var/lib/mlfaas/lib/libmlfaas_limiter.so' }]));
  });

  it('round-trips the spec through the Deployment for /system/functions', () => {
    const spec = parseDeployment(aFunction('f2').namespace('dev').env('B', '2').minScale(1).build());
    const d = deploymentFor(spec, 3) as Any;
    const s = statusOf({ ...d, metadata: { ...d.metadata, creationTimestamp: '2026-11-24T10:00:00Z' }, status: { availableReplicas: 2 } }, 'inference');
    expect(s).toEqual(expect.objectContaining({ name: 'f2', namespace: 'dev', image: 'test/echo-http:1', envVars: { B: '2' }, replicas: 3,
      availableReplicas: 2, createdAt: '2026-11-24T10:00:00Z' }));
    expect(statusOf({ metadata: {} }, 'inference')).toBeUndefined(); // not made by mlfaas
  });
});
