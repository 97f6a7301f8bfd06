/**
 * How the provider and the node agent reach the Kubernetes API: in a pod, the service account
 * (`loadFromCluster`: the API server's CA and a token file re-read as it rotates); outside, an
 * explicit server and token (tests, `mlfaas gateway --provider kubernetes` from a workstation), or
 * the user's kubeconfig ($KUBECONFIG, ~/.kube/config).
 */
import { KubeConfig } from '@kubernetes/client-node';

export interface KubeConnection {
  /** API server URL; plain http only with `insecure` (client-node refuses it otherwise). */
  server?: string;
  token?: string;
  /** PEM of the API server's CA. */
  caPem?: string;
  /** Skip TLS verification (and allow http://): tests against the fake API server only. */
  insecure?: boolean;
  inCluster?: boolean;
}

export function kubeConfig(c: KubeConnection = {}): KubeConfig {
  const kc = new KubeConfig();
  if (c.inCluster) kc.loadFromCluster();
  else if (c.server) {
    kc.loadFromOptions({
      clusters: [{ name: 'mlfaas', server: c.server.replace(/\/+$/, ''), skipTLSVerify: !!c.insecure, ...(c.caPem ? { caData: Buffer.from(c.caPem).toString('base64') } : {}) }],
      users: [{ name: 'mlfaas', ...(c.token ? { token: c.token } : {}) }],
      contexts: [{ name: 'mlfaas', cluster: 'mlfaas', user: 'mlfaas' }],
      currentContext: 'mlfaas',
    });
  } else kc.loadFromDefault();
  return kc;
}

/** The connection named by the environment: MLFAAS_KUBE_SERVER / _TOKEN / _CA / _INSECURE, or in-cluster when running in a pod. */
export function connectionFromEnv(env: NodeJS.ProcessEnv = process.env): KubeConnection {
  if (env.MLFAAS_KUBE_SERVER) return { server: env.MLFAAS_KUBE_SERVER, token: env.MLFAAS_KUBE_TOKEN, caPem: env.MLFAAS_KUBE_CA, insecure: env.MLFAAS_KUBE_INSECURE === '1' };
  if (env.KUBERNETES_SERVICE_HOST) return { inCluster: true };
  return {};
}
