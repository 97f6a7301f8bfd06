import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';

/**
 * `MLFAAS_FUNCTION_EGRESS=internet`: each sandboxed replica gets a veth pair (a /30 of
 * 10.200.0.0/16, its default route through the host) and the host's nftables table `mlfaas`
 * lets it reach the internet only, as a pod network with a default-deny policy and an egress
 * rule for public addresses would: nothing on the host (any address of it, any port), no other
 * replica, no private, shared, loopback, link-local (cloud metadata) or multicast range, no IPv6;
 * nothing from outside may open a connection to a replica. Source addresses are masqueraded.
 */

/** Host-side interfaces are named `mlf` + 8 hex characters (IFNAMSIZ is 16). */
export const VETH_PREFIX = 'mlf';
export const EGRESS_NET = '10.200.0.0/16';

/** Destinations a replica may never reach, whatever else the host routes (IPv4). */
export const BLOCKED_V4 = [
  '0.0.0.0/8', // "this" network
  '10.0.0.0/8', // private (and the replicas' own 10.200/16)
  '100.64.0.0/10', // shared address space (carrier NAT, some clouds' internal services)
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local: cloud metadata services
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '224.0.0.0/3', // multicast and reserved
];

/** The nftables ruleset (`nft -f`), pure. */
export function egressRuleset(): string {
  const w = `"${VETH_PREFIX}*"`;
  return [
    'table inet mlfaas {',
    '  chain input {',
    '    type filter hook input priority -10; policy accept;',
    `    iifname ${w} drop comment "a replica reaches nothing on the host"`,
    '  }',
    '  chain forward {',
    '    type filter hook forward priority -10; policy accept;',
    `    iifname ${w} oifname ${w} drop comment "nor another replica"`,
    `    iifname ${w} meta nfproto ipv6 drop`,
    `    iifname ${w} ip daddr { ${BLOCKED_V4.join(', ')} } drop comment "nor a private, loopback, link-local or multicast address"`,
    `    iifname ${w} accept`,
    `    oifname ${w} ct state established,related accept`,
    `    oifname ${w} drop comment "nothing from outside opens a connection to a replica"`,
    '  }',
    '}',
    'table ip mlfaas_nat {',
    '  chain postrouting {',
    '    type nat hook postrouting priority 100; policy accept;',
    `    ip saddr ${EGRESS_NET} oifname != ${w} masquerade`,
    '  }',
    '}',
    '',
  ].join('\n');
}

/** The /30 of slot `k`: the host side is .1 of it, the replica .2. Pure. */
export function slotAddresses(k: number): { hostIp: string; nsIp: string; prefix: number } {
  if (!(k >= 0 && k < 16384)) throw new Error(`egress slot ${k} is outside 10.200.0.0/16`);
  const base = k * 4;
  const ip = (n: number) => `10.200.${(base + n) >> 8}.${(base + n) & 255}`;
  return { hostIp: ip(1), nsIp: ip(2), prefix: 30 };
}

/** What the sandbox needs for one replica (`--veth`). */
export interface VethPlan {
  hostIf: string;
  hostIp: string;
  nsIp: string;
  prefix: number;
}

const NFT = ['/usr/sbin/nft', '/sbin/nft'];
const IP = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'];

/** Why this host cannot give functions internet egress, or undefined when it can. */
export function egressUnavailable(): string | undefined {
  if (!NFT.some(existsSync)) return 'nft (nftables) is not installed';
  if (!IP.some(existsSync)) return "iproute2's ip is not installed";
  return undefined;
}

/**
 * The node's egress: installs the ruleset (replacing an earlier one of ours) and turns IP
 * forwarding on at start, and hands each replica a slot. The ruleset stays after the agent stops
 * (it concerns `mlf*` interfaces only, and a replica's goes with its network namespace).
 */
export class Egress {
  private used = new Map<string, number>();

  private constructor() {}

  static start(): Egress {
    const why = egressUnavailable();
    if (why) throw new Error(`MLFAAS_FUNCTION_EGRESS=internet: ${why}`);
    const nft = NFT.find(existsSync)!;
    for (const t of ['inet mlfaas', 'ip mlfaas_nat']) {
      try {
        execFileSync(nft, ['delete', 'table', ...t.split(' ')], { stdio: 'ignore' });
      } catch {
        // not there
      }
    }
    execFileSync(nft, ['-f', '-'], { input: egressRuleset(), stdio: ['pipe', 'ignore', 'pipe'] });
    if (readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim() !== '1') writeFileSync('/proc/sys/net/ipv4/ip_forward', '1');
    return new Egress();
  }

  /** A slot for the replica (kept across its restarts). */
  attach(replicaId: string): VethPlan {
    let k = this.used.get(replicaId);
    if (k === undefined) {
      const taken = new Set(this.used.values());
      k = 0;
      while (taken.has(k)) k++;
      this.used.set(replicaId, k);
    }
    const hostIf = VETH_PREFIX + createHash('sha1').update(replicaId).digest('hex').slice(0, 8);
    return { hostIf, ...slotAddresses(k) };
  }

  release(replicaId: string): void {
    this.used.delete(replicaId);
  }
}
