/** Where the Kubernetes API server is (no client code: config parsing imports this). */
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

/** The connection named by the environment: MLFAAS_KUBE_SERVER / _TOKEN / _CA / _INSECURE, or in-cluster when running in a pod. */
export function connectionFromEnv(env: NodeJS.ProcessEnv = process.env): KubeConnection {
  if (env.MLFAAS_KUBE_SERVER)
    return { server: env.MLFAAS_KUBE_SERVER, token: env.MLFAAS_KUBE_TOKEN, caPem: env.MLFAAS_KUBE_CA, insecure: env.MLFAAS_KUBE_INSECURE === '1' };
  if (env.KUBERNETES_SERVICE_HOST) return { inCluster: true };
  return {};
}
