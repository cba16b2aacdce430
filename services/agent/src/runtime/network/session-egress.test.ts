import { createLogger } from '@sandbox/logger';
import type { EgressPolicy } from '@sandbox/contract';
import { nodeChains, restoreInput } from './egress-rules';
import { removeNodeEgress, SessionEgress } from './session-egress';

const chains = nodeChains('node-1');
const sessionChain = chains.session;

const logger = createLogger({ name: 'test', level: 'silent' });
const denyAll: EgressPolicy = { default: 'deny', allow: [], deny: [] };
const allowAll: EgressPolicy = { default: 'allow', allow: [], deny: [] };

/** iptables as a list of calls: `-S` lists what `existing` names. */
function fakeIptables(existing = '') {
  const restores: string[] = [];
  const calls: Array<{ args: string[]; netns: number | undefined }> = [];
  const run = {
    restore: (input: string) => {
      restores.push(input);
      return Promise.resolve();
    },
    iptables: (args: string[], netns?: number) => {
      calls.push({ args, netns });
      if (args.includes('-S')) return Promise.resolve({ stdout: existing });
      if (args.includes('-C')) return Promise.reject(new Error('no such rule'));
      return Promise.resolve({ stdout: '' });
    },
  };
  return { run, restores, calls };
}

describe('restoreInput', () => {
  it("writes each restricted session's chain and its jump by address; none for allow-all", () => {
    const input = restoreInput(
      'node-1',
      new Map([
        [
          'ses_a',
          {
            ip: '172.18.0.5',
            policy: {
              default: 'deny',
              allow: ['203.0.113.0/24', 'example.com'],
              deny: ['203.0.113.9/32'],
            },
          },
        ],
        [
          'ses_b',
          { ip: '172.18.0.6', policy: { default: 'allow', allow: [], deny: ['198.51.100.0/24'] } },
        ],
        ['ses_c', { ip: '172.18.0.7', policy: allowAll }],
      ]),
    );
    const a = sessionChain('ses_a');
    const b = sessionChain('ses_b');
    expect(input.split('\n')).toEqual([
      '*filter',
      `:${chains.node} - [0:0]`,
      `:${a} - [0:0]`,
      `:${b} - [0:0]`,
      `-A ${a} -d 203.0.113.9/32 -j REJECT --reject-with icmp-admin-prohibited`,
      `-A ${a} -d 203.0.113.0/24 -j RETURN`,
      `-A ${a} -j REJECT --reject-with icmp-admin-prohibited`,
      `-A ${chains.node} -s 172.18.0.5/32 -j ${a}`,
      `-A ${b} -d 198.51.100.0/24 -j REJECT --reject-with icmp-admin-prohibited`,
      `-A ${b} -j RETURN`,
      `-A ${chains.node} -s 172.18.0.6/32 -j ${b}`,
      'COMMIT',
      '',
    ]);
    expect(a.length).toBeLessThanOrEqual(28);
    // Another node's chains are named apart: no agent undoes another's rules.
    expect(nodeChains('node-2').session('ses_a')).not.toBe(a);
    expect(nodeChains('node-2').node).not.toBe(chains.node);
  });
});

describe('SessionEgress', () => {
  it('costs nothing for allow-all, and closes Docker DNS in the sandbox for deny-all', async () => {
    const ipt = fakeIptables();
    const egress = new SessionEgress(logger, 'node-1', true, ipt.run);
    await egress.apply('ses_a', { ip: '172.18.0.5', pid: 101 }, allowAll);
    expect(ipt.restores).toHaveLength(0);
    expect(ipt.calls).toHaveLength(0);

    await egress.apply('ses_b', { ip: '172.18.0.6', pid: 102 }, denyAll);
    expect(ipt.restores).toHaveLength(1);
    const inNetns = ipt.calls.filter((c) => c.netns === 102).map((c) => c.args.join(' '));
    expect(inNetns).toContain('-I OUTPUT -d 127.0.0.11/32 -j SANDBOX-DNS');
    expect(inNetns).toContain('-A SANDBOX-DNS -j REJECT --reject-with icmp-admin-prohibited');

    // The same again: held so already, nothing written.
    await egress.apply('ses_b', { ip: '172.18.0.6', pid: 102 }, denyAll);
    expect(ipt.restores).toHaveLength(1);
  });

  it('opens DNS again, drops the chain, when a session goes back to allow-all', async () => {
    const ipt = fakeIptables();
    const egress = new SessionEgress(logger, 'node-1', true, ipt.run);
    await egress.apply('ses_b', { ip: '172.18.0.6', pid: 102 }, denyAll);
    ipt.calls.length = 0;
    await egress.apply('ses_b', { ip: '172.18.0.6', pid: 102 }, allowAll);
    expect(egress.holds('ses_b')).toBe(false);
    expect(ipt.restores.at(-1)).not.toContain('172.18.0.6');
    const calls = ipt.calls.map((c) => `${c.netns ?? 'host'} ${c.args.join(' ')}`);
    expect(calls).toContain(`host -t filter -X ${sessionChain('ses_b')}`);
    expect(calls).toContain('102 -F SANDBOX-DNS');
    expect(calls).not.toContain('102 -A SANDBOX-DNS -j REJECT --reject-with icmp-admin-prohibited');
  });

  it("gives an address to its new sandbox alone: another session's stale claim goes", async () => {
    const ipt = fakeIptables();
    const egress = new SessionEgress(logger, 'node-1', true, ipt.run);
    await egress.apply('ses_old', { ip: '172.18.0.9', pid: 7 }, denyAll);
    await egress.apply('ses_new', { ip: '172.18.0.9', pid: 8 }, allowAll);
    expect(egress.holds('ses_old')).toBe(false);
    expect(ipt.restores.at(-1)).not.toContain('172.18.0.9');
  });

  it('removes the chains an earlier agent left, at its first write', async () => {
    const left = sessionChain('ses_gone');
    const others = nodeChains('node-2').session('ses_other');
    const ipt = fakeIptables(
      `-N SANDBOX-SESSIONS\n-N ${left}\n-N ${others}\n-A ${left} -j RETURN\n`,
    );
    const egress = new SessionEgress(logger, 'node-1', true, ipt.run);
    await egress.applyAll([
      { sessionId: 'ses_a', address: { ip: '172.18.0.5', pid: 1 }, policy: denyAll },
      { sessionId: 'ses_b', address: { ip: '172.18.0.6', pid: 2 }, policy: denyAll },
    ]);
    expect(ipt.restores).toHaveLength(1); // all at once
    const calls = ipt.calls.map((c) => c.args.join(' '));
    expect(calls).toContain(`-t filter -X ${left}`);
    expect(calls).not.toContain(`-t filter -X ${others}`);
    expect(calls).toContain(`-t filter -A SANDBOX-SESSIONS -j ${chains.node}`);
  });
});

describe('SessionEgress: nodes gone, the firewall off, domain rules', () => {
  it("removes a node's rules, and no other node's, when the node is gone for good", async () => {
    const others = nodeChains('node-2').session('ses_other');
    const ipt = fakeIptables(`-N ${chains.node}\n-N ${sessionChain('ses_a')}\n-N ${others}\n`);
    await removeNodeEgress('node-1', ipt.run.iptables);
    const calls = ipt.calls.map((c) => c.args.join(' '));
    expect(calls).toContain(`-t filter -D SANDBOX-SESSIONS -j ${chains.node}`);
    expect(calls).toContain(`-t nat -D SANDBOX-SESSIONS -j ${chains.node}`);
    expect(calls).toContain(`-t filter -X ${chains.node}`);
    expect(calls).toContain(`-t filter -X ${sessionChain('ses_a')}`);
    expect(calls).not.toContain(`-t filter -X ${others}`);
  });

  it('refuses a restrictive policy where the firewall is off, and lets allow-all be', async () => {
    const ipt = fakeIptables();
    const egress = new SessionEgress(logger, 'node-1', false, ipt.run);
    await expect(
      egress.apply('ses_a', { ip: '172.18.0.5', pid: 1 }, allowAll),
    ).resolves.toBeUndefined();
    await expect(egress.apply('ses_a', { ip: '172.18.0.5', pid: 1 }, denyAll)).rejects.toThrow(
      /SANDBOX_EGRESS_FIREWALL=off/,
    );
    expect(ipt.restores).toHaveLength(0);
  });

  it('holds domain rules only once its egress proxy listens, then sends web traffic there', async () => {
    const ipt = fakeIptables();
    const egress = new SessionEgress(logger, 'node-1', true, ipt.run);
    const domains: EgressPolicy = { default: 'deny', allow: ['example.com'], deny: [] };
    await expect(egress.apply('ses_a', { ip: '172.18.0.5', pid: 1 }, domains)).rejects.toThrow(
      /egress proxy/,
    );
    egress.useProxy({
      gateway: '172.18.0.1',
      ports: { http: 41001, tls: 41002 },
      dns: { udp: 41003, tcp: 41004 },
    });
    await egress.apply('ses_a', { ip: '172.18.0.5', pid: 1 }, domains);
    expect(ipt.restores.at(-1)).toContain('--to-destination 172.18.0.1:41002');
    expect(ipt.restores.at(-1)).toContain('--to-destination 172.18.0.1:41003');
    expect(egress.policyAt('172.18.0.5')).toEqual(domains);
    const calls = ipt.calls.map((c) => c.args.join(' '));
    expect(calls).toContain(`-t nat -A SANDBOX-SESSIONS -j ${chains.node}`);
    expect(calls).toContain(`-t filter -A SANDBOX-PROXY -j ${chains.proxy}`);
  });

  it('forgets a session whose sandbox is gone', async () => {
    const ipt = fakeIptables();
    const egress = new SessionEgress(logger, 'node-1', true, ipt.run);
    await egress.apply('ses_a', { ip: '172.18.0.5', pid: 1 }, denyAll);
    await egress.forget('ses_a');
    expect(egress.count()).toBe(0);
    expect(ipt.restores.at(-1)).not.toContain('172.18.0.5');
  });
});
