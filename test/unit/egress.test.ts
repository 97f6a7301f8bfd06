import { BLOCKED_V4, egressRuleset, slotAddresses } from '../../node-runtime/egress';

describe('egress (MLFAAS_FUNCTION_EGRESS=internet), pure parts', () => {
  test('slots are /30s of 10.200.0.0/16: host side .1, replica .2', () => {
    expect(slotAddresses(0)).toEqual({ hostIp: '10.200.0.1', nsIp: '10.200.0.2', prefix: 30 });
    expect(slotAddresses(1)).toEqual({ hostIp: '10.200.0.5', nsIp: '10.200.0.6', prefix: 30 });
    expect(slotAddresses(64)).toEqual({ hostIp: '10.200.1.1', nsIp: '10.200.1.2', prefix: 30 });
    expect(slotAddresses(16383)).toEqual({ hostIp: '10.200.255.253', nsIp: '10.200.255.254', prefix: 30 });
    expect(() => slotAddresses(16384)).toThrow(/outside/);
  });

  test('the ruleset drops what reaches the host, other replicas, private and link-local ranges, IPv6; masquerades the rest', () => {
    const r = egressRuleset();
    expect(r).toMatch(/hook input[\s\S]*iifname "mlf\*" drop/);
    expect(r).toMatch(/iifname "mlf\*" oifname "mlf\*" drop/);
    expect(r).toMatch(/iifname "mlf\*" meta nfproto ipv6 drop/);
    for (const net of ['169.254.0.0/16', '127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10']) {
      expect(BLOCKED_V4).toContain(net);
      expect(r).toContain(net);
    }
    expect(r).toMatch(/oifname "mlf\*" ct state established,related accept\n\s+oifname "mlf\*" drop/);
    expect(r).toMatch(/ip saddr 10\.200\.0\.0\/16 oifname != "mlf\*" masquerade/);
    // the drops come before the accept of the rest
    expect(r.indexOf('iifname "mlf*" accept')).toBeGreaterThan(r.indexOf('169.254.0.0/16'));
  });
});
