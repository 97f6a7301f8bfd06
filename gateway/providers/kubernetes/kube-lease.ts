/**
 * Leader election on a Kubernetes Lease (coordination.k8s.io/v1), as client-go's leaderelection
 * does it: the holder renews `spec.renewTime` every `leaseMs / 3`; a candidate takes the lease only
 * once it has seen the record unchanged for `leaseMs` (its own clock: no trust in the holder's
 * timestamps across machines), writing with the version it read (a 409 means someone else won);
 * a holder that cannot renew for `leaseMs` steps down by itself; `close()` releases the lease
 * (empty holder) so a successor need not wait. Same surface as the Redis `Lease`.
 */
import { ApiException, type CoordinationV1Api, type V1Lease, V1MicroTime } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';

export interface LeaderLease {
  readonly isHeld: boolean;
  start(): Promise<void>;
  close(): Promise<void>;
}

const code = (e: unknown) => (e instanceof ApiException ? e.code : undefined);

export class KubeLease implements LeaderLease {
  readonly identity: string;
  private held = false;
  private renewedAt = 0;
  private observed?: { version: string; at: number };
  private timer?: NodeJS.Timeout;
  private busy = false;
  private closed = false;

  constructor(
    private readonly api: CoordinationV1Api,
    private readonly namespace: string,
    private readonly name: string,
    private readonly leaseMs: number,
    identity?: string,
    private readonly now: () => number = Date.now,
  ) {
    this.identity = identity ?? `${process.env.HOSTNAME ?? 'mlfaas'}-${randomBytes(4).toString('hex')}`;
  }

  get isHeld(): boolean {
    return this.held && this.now() - this.renewedAt < this.leaseMs;
  }

  async start(): Promise<void> {
    await this.attempt();
    this.timer = setInterval(() => void this.attempt(), Math.max(100, this.leaseMs / 3));
  }

  /** Lease times are MicroTime on the wire (6 fractional digits): V1MicroTime serialises so. */
  private spec(transitions: number, acquired?: Date | string): V1Lease['spec'] {
    const t = new V1MicroTime(this.now());
    return { holderIdentity: this.identity, leaseDurationSeconds: Math.max(1, Math.ceil(this.leaseMs / 1000)),
      acquireTime: acquired ? new V1MicroTime(acquired) : t, renewTime: t, leaseTransitions: transitions };
  }

  /** One round: create, renew, or take over an expired lease. */
  async attempt(): Promise<void> {
    if (this.closed || this.busy) return;
    this.busy = true;
    try {
      let cur: V1Lease | undefined;
      try {
        cur = await this.api.readNamespacedLease({ name: this.name, namespace: this.namespace });
      } catch (e) {
        if (code(e) !== 404) throw e;
      }
      if (!cur) {
        await this.api.createNamespacedLease({ namespace: this.namespace, body: { metadata: { name: this.name }, spec: this.spec(0) } });
        return this.won();
      }
      const version = cur.metadata!.resourceVersion!;
      if (this.observed?.version !== version) this.observed = { version, at: this.now() };
      const holder = cur.spec?.holderIdentity ?? '';
      const mine = holder === this.identity;
      const expired = holder === '' || this.now() - this.observed.at >= this.leaseMs;
      if (!mine && !expired) {
        this.held = false;
        return;
      }
      const transitions = (cur.spec?.leaseTransitions ?? 0) + (mine ? 0 : 1);
      await this.api.replaceNamespacedLease({ name: this.name, namespace: this.namespace,
        body: { ...cur, spec: this.spec(transitions, mine ? cur.spec?.acquireTime : undefined) } });
      this.won();
    } catch (e) {
      // 409: another candidate wrote first; anything else: keep the lease only while it is fresh
      if (code(e) === 409 || this.now() - this.renewedAt >= this.leaseMs) this.held = false;
    } finally {
      this.busy = false;
    }
  }

  private won(): void {
    this.held = true;
    this.renewedAt = this.now();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (!this.held) return;
    this.held = false;
    try {
      const cur = await this.api.readNamespacedLease({ name: this.name, namespace: this.namespace });
      if (cur.spec?.holderIdentity === this.identity) {
        const spec = { ...cur.spec, holderIdentity: '', acquireTime: new V1MicroTime(cur.spec.acquireTime ?? this.now()),
          renewTime: new V1MicroTime(this.now()) };
        await this.api.replaceNamespacedLease({ name: this.name, namespace: this.namespace, body: { ...cur, spec } });
      }
    } catch {
      // the successor waits out the lease instead
    }
  }
}
