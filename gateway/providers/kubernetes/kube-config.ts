/**
 * How the provider and the node agent reach the Kubernetes API: in a pod, the service account
 * (`loadFromCluster`: the API server's CA and a token file re-read as it rotates); outside, an
 * explicit server and token (tests; `MLFAAS_PROVIDER=kubernetes mlfaas gateway` from a workstation), or
 * the user's kubeconfig ($KUBECONFIG, ~/.kube/config).
 */
import { KubeConfig } from '@kubernetes/client-node';
import type { KubeConnection } from './kube-connection';

export type { KubeConnection } from './kube-connection';

export function kubeConfig(c: KubeConnection = {}): KubeConfig {
  const kc = new KubeConfig();
  if (c.inCluster) kc.loadFromCluster();
  else if (c.server) {
    kc.loadFromOptions({
      clusters: [{ name: 'mlfaas', server: c.server.replace(/\/+$/, ''), skipTLSVerify: !!c.insecure,
        ...(c.caPem ? { caData: Buffer.from(c.caPem).toString('base64') } : {}) }],
      users: [{ name: 'mlfaas', ...(c.token ? { token: c.token } : {}) }],
      contexts: [{ name: 'mlfaas', cluster: 'mlfaas', user: 'mlfaas' }],
      currentContext: 'mlfaas',
    });
  } else kc.loadFromDefault();
  return kc;
}
