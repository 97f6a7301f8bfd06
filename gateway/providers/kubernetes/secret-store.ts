/**
 * Function secrets as Kubernetes Secrets, the way faas-netes keeps them: one Secret per name in
 * the function's namespace, labelled `app.kubernetes.io/managed-by=openfaas`, the value under a
 * data key equal to the secret's name (so the projected volume shows `/var/openfaas/secrets/<name>`).
 * Only Secrets with that label are listed, updated or removed: the provider never touches a
 * Secret it did not make.
 */
import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import { ErrorCode, notFound, PlatformError } from '../../errors';
import type { Secret, SecretStore } from '../function-provider';
import { apiCode, unless } from './api-errors';

export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'openfaas' };
const SELECTOR = 'app.kubernetes.io/managed-by=openfaas';

function body(s: Secret): V1Secret {
  const value = s.rawValue ?? Buffer.from(s.value ?? '', 'utf8').toString('base64');
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: s.name, namespace: s.namespace, labels: MANAGED_BY }, type: 'Opaque',
    data: { [s.name]: value } };
}

export class KubeSecretStore implements SecretStore {
  constructor(private readonly core: CoreV1Api) {}

  async list(namespace: string) {
    const l = await this.core.listNamespacedSecret({ namespace, labelSelector: SELECTOR });
    return l.items.map((s) => ({ name: s.metadata!.name!, namespace })).sort((a, b) => a.name.localeCompare(b.name));
  }

  async create(s: Secret): Promise<void> {
    try {
      await this.core.createNamespacedSecret({ namespace: s.namespace, body: body(s) });
    } catch (e) {
      if (apiCode(e) === 409) throw new PlatformError(ErrorCode.Conflict, `secret with the name "${s.name}" already exists`, 'name');
      if (apiCode(e) === 404) throw notFound(`namespace ${s.namespace} not found`);
      throw e;
    }
  }

  private async managed(name: string, namespace: string): Promise<V1Secret> {
    const cur = await unless(this.core.readNamespacedSecret({ name, namespace }), 404);
    if (!cur || cur.metadata?.labels?.['app.kubernetes.io/managed-by'] !== 'openfaas') throw notFound(`secret "${name}" not found in namespace ${namespace}`);
    return cur;
  }

  async update(s: Secret): Promise<void> {
    const cur = await this.managed(s.name, s.namespace);
    // replace with the version read: a concurrent change gets a 409 rather than being overwritten
    const next = { ...body(s), metadata: { ...body(s).metadata, resourceVersion: cur.metadata!.resourceVersion } };
    try {
      await this.core.replaceNamespacedSecret({ name: s.name, namespace: s.namespace, body: next });
    } catch (e) {
      if (apiCode(e) === 404) throw notFound(`secret "${s.name}" not found in namespace ${s.namespace}`);
      if (apiCode(e) === 409) throw new PlatformError(ErrorCode.Conflict, `secret "${s.name}" changed while being updated; retry`, 'name');
      throw e;
    }
  }

  async remove(name: string, namespace: string): Promise<void> {
    await this.managed(name, namespace);
    try {
      await this.core.deleteNamespacedSecret({ name, namespace });
    } catch (e) {
      if (apiCode(e) === 404) throw notFound(`secret "${name}" not found in namespace ${namespace}`);
      throw e;
    }
  }
}
