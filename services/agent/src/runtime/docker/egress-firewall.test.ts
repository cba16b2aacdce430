import {
  applyEgressFirewall,
  firewallRules,
  jumpRules,
  parseNameservers,
  staleJumps,
  restoreInput,
  strayRules,
} from './egress-firewall';

describe('firewallRules', () => {
  const rules = firewallRules({
    bridge: 'sbx0',
    dnsServers: ['10.0.0.53'],
    allow: ['10.9.0.0/16'],
  });
  const joined = rules.map((r) => r.join(' '));

  it("goes to the sessions' own policies first, then lets replies through, then DNS and allowed ranges, before refusing private ranges", () => {
    const first = (text: string) => joined.findIndex((r) => r.includes(text));
    expect(joined[0]).toBe('-A SANDBOX-EGRESS -j SANDBOX-SESSIONS');
    expect(first('ESTABLISHED')).toBe(1);
    expect(first('-d 10.0.0.53/32 -p udp --dport 53 -j RETURN')).toBeGreaterThan(0);
    expect(first('-d 10.9.0.0/16 -j RETURN')).toBeLessThan(first('-d 10.0.0.0/8 -j REJECT'));
    for (const cidr of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16']) {
      expect(joined).toContainEqual(expect.stringContaining(`-d ${cidr} -j REJECT`));
    }
  });

  it("refuses everything to the host except replies and the agents' egress proxies", () => {
    const input = joined.filter((r) => r.includes('SANDBOX-HOST'));
    expect(input).toEqual([
      '-A SANDBOX-HOST -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT',
      '-A SANDBOX-HOST -j SANDBOX-PROXY',
      '-A SANDBOX-HOST -j REJECT --reject-with icmp-admin-prohibited',
    ]);
  });

  it('hooks only the sandbox bridge', () => {
    expect(jumpRules('sbx0')).toEqual([
      ['DOCKER-USER', '-i', 'sbx0', '-j', 'SANDBOX-EGRESS'],
      ['INPUT', '-i', 'sbx0', '-j', 'SANDBOX-HOST'],
    ]);
  });
});

describe('applyEgressFirewall', () => {
  const policy = { bridge: 'sbx0', dnsServers: ['10.0.0.53'], allow: [] };

  it('replaces both chains in one iptables-restore transaction, never flushing them alone', async () => {
    const calls: string[][] = [];
    const restores: string[] = [];
    await applyEgressFirewall(
      policy,
      (args) => {
        calls.push(args);
        return args[0] === '-C' || args.includes('-C')
          ? Promise.reject(new Error('absent'))
          : Promise.resolve({ stdout: '' });
      },
      (input) => {
        restores.push(input);
        return Promise.resolve();
      },
    );
    expect(calls.filter((c) => c.includes('-F') || c.includes('-A'))).toEqual([]);
    expect(restores).toEqual([restoreInput(firewallRules(policy))]);
    const lines = (restores[0] ?? '').split('\n');
    expect(lines.slice(0, 3)).toEqual([
      '*filter',
      ':SANDBOX-EGRESS - [0:0]',
      ':SANDBOX-HOST - [0:0]',
    ]);
    expect(lines.slice(3, -2)).toEqual(firewallRules(policy).map((rule) => rule.join(' ')));
    expect(lines.slice(-2)).toEqual(['COMMIT', '']);
    // The jumps come after the rules they lead to.
    expect(calls.filter((c) => c[0] === '-I').map((c) => c.slice(0, 2))).toEqual([
      ['-I', 'DOCKER-USER'],
      ['-I', 'INPUT'],
    ]);
    expect(calls.findIndex((c) => c[0] === '-I')).toBeGreaterThan(
      calls.findIndex((c) => c.includes('DOCKER-USER') && c[0] === '-N'),
    );
  });
});

describe('parseNameservers', () => {
  it('reads IPv4 nameservers', () => {
    expect(parseNameservers('# x\nnameserver 10.255.255.53\nnameserver ::1\nsearch a\n')).toEqual([
      '10.255.255.53',
    ]);
  });
});

describe("the sessions' chains: rules to delete, from a listing of iptables -S", () => {
  it.each([
    {
      case: "strayRules: what is not a node's jump in the sessions' chain",
      listing: [
        '-N SANDBOX-SESSIONS',
        '-A SANDBOX-SESSIONS -j SBXN-35971b',
        '-A SANDBOX-SESSIONS -s 172.18.0.6/32 -j SBX-5ccf415a940969ee321b',
        '-A SANDBOX-SESSIONS -j SBXN-abcdef',
      ],
      find: strayRules,
      deletes: [
        ['-D', 'SANDBOX-SESSIONS', '-s', '172.18.0.6/32', '-j', 'SBX-5ccf415a940969ee321b'],
      ],
    },
    {
      case: "staleJumps: any node's jumps for addresses no sandbox has now (172.18.0.3 has one)",
      listing: [
        '-N SBXN-25bf8e',
        '-A SBXN-25bf8e -s 172.18.0.2/32 -j SBX25bf8e-3872f6149e164133',
        '-A SBXN-abcdef -s 172.18.0.3/32 -j SBXabcdef-0000000000000000',
        '-A SANDBOX-SESSIONS -j SBXN-25bf8e',
      ],
      find: (listing: string) => staleJumps(listing, ['172.18.0.3']),
      deletes: [['-D', 'SBXN-25bf8e', '-s', '172.18.0.2/32', '-j', 'SBX25bf8e-3872f6149e164133']],
    },
  ])('$case', ({ listing, find, deletes }) => {
    expect(find(listing.join('\n'))).toEqual(deletes);
  });
});
