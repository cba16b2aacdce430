import { isAllowAll, samePolicy, type EgressPolicy } from '@sandbox/contract';
import type { Logger } from '@sandbox/logger';
import { PROXY_CHAIN, SESSIONS_CHAIN } from '../docker/egress-firewall';
import {
  allowsDns,
  needsProxy,
  nodeChains,
  restoreInput,
  type Held,
  type ProxyTarget,
} from './egress-rules';
import { iptables, iptablesRestore, type Iptables, type Restore } from '../iptables';

/** Inside a sandbox's network namespace: refuses Docker's DNS when its policy allows no name. */
const DNS_CHAIN = 'SANDBOX-DNS';
const DOCKER_DNS = '127.0.0.11';

/** A sandbox's place on the network: its address and its network namespace (a pid in it). */
export interface SandboxAddress {
  ip: string;
  pid: number;
}

type Table = 'filter' | 'nat';

/*
 * The sessions' own egress policies (ADR 30) live in SESSIONS_CHAIN, jumped to first from the
 * sandbox network's forward chain (egress-firewall.ts): before the rule that lets established
 * connections through, so that a policy tightened at run time cuts connections already open.
 * It holds one jump per sandbox whose policy is not allow-all, by the sandbox's address, to a
 * chain of that session's rules. What it lets through still meets the node's own rules after
 * it (no host, private range or metadata).
 */

/**
 * The egress policies of this node's sandboxes, as iptables rules: one chain per session whose
 * policy is not allow-all, jumped to by its sandbox's address. Every change rewrites the
 * sessions' chains in one `iptables-restore` transaction: there is no moment when a policy is
 * half applied, nor a jump left to a session that is gone (an address a new sandbox may get).
 */
export class SessionEgress {
  private readonly sessions = new Map<string, Held>();
  /** Chains written by the last transaction, per table (removed once unused); undefined: not read yet. */
  private written: Record<Table, Set<string>> | undefined;
  /** The node's egress proxy, once it listens (domain rules need it). */
  private proxy: ProxyTarget | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  private readonly chains: ReturnType<typeof nodeChains>;

  constructor(
    private readonly logger: Logger,
    private readonly nodeId: string,
    private readonly enforce: boolean,
    private readonly run: { restore: Restore; iptables: Iptables } = {
      restore: iptablesRestore,
      iptables,
    },
  ) {
    this.chains = nodeChains(nodeId);
  }

  /** The policy of the sandbox at `ip`, if one is held there (the proxy asks). */
  policyAt(ip: string): EgressPolicy | undefined {
    for (const held of this.sessions.values()) if (held.ip === ip) return held.policy;
    return undefined;
  }

  /** The node's egress proxy listens: policies with domain rules can be held from now on. */
  useProxy(proxy: ProxyTarget): void {
    this.proxy = proxy;
    this.written = undefined; // the next write hooks the proxy's chains in
  }

  holds(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  count(): number {
    return this.sessions.size;
  }

  /**
   * Holds the sandbox at `address` to `policy` (the session's earlier address, if any, is
   * forgotten; so is any other session's claim on this address). A sandbox under allow-all that
   * nothing was held for costs nothing. Throws if the node cannot enforce a policy other than
   * allow-all (its firewall is off).
   */
  apply(sessionId: string, address: SandboxAddress, policy: EgressPolicy): Promise<void> {
    return this.applyAll([{ sessionId, address, policy }]);
  }

  /** The same for several sandboxes, in one change (an agent's start holds them all at once). */
  async applyAll(entries: ReadonlyArray<Entry>): Promise<void> {
    const changes = entries.filter((entry) => this.changes(entry));
    if (changes.length === 0) return;
    if (!this.enforce) {
      if (changes.every(({ policy }) => isAllowAll(policy))) return;
      throw new Error('this node enforces no egress policy (SANDBOX_EGRESS_FIREWALL=off)');
    }
    if (this.proxy === undefined && changes.some(({ policy }) => needsProxy(policy))) {
      throw new Error("this node's egress proxy does not run: it cannot hold domain rules");
    }
    await this.serialised(async () => {
      const dns: Array<{ pid: number; open: boolean }> = [];
      for (const { sessionId, address, policy } of changes) {
        for (const [other, held] of this.sessions) {
          if (other !== sessionId && held.ip === address.ip) this.sessions.delete(other);
        }
        const dnsWasClosed = this.sessions.get(sessionId)?.dnsClosedIn === address.pid;
        const closeDns = !allowsDns(policy);
        if (isAllowAll(policy)) this.sessions.delete(sessionId);
        else {
          this.sessions.set(sessionId, {
            ip: address.ip,
            policy,
            ...(closeDns ? { dnsClosedIn: address.pid } : {}),
          });
        }
        if (closeDns !== dnsWasClosed) dns.push({ pid: address.pid, open: !closeDns });
      }
      await this.write();
      for (const { pid, open } of dns) await this.setDns(pid, open);
    });
  }

  /** Whether holding `entry` changes anything (a reconcile pass mostly finds nothing to do). */
  private changes({ sessionId, address, policy }: Entry): boolean {
    const claimed = [...this.sessions].some(
      ([other, held]) => other !== sessionId && held.ip === address.ip,
    );
    const held = this.sessions.get(sessionId);
    if (held === undefined) return claimed || !isAllowAll(policy);
    return (
      claimed ||
      held.ip !== address.ip ||
      !samePolicy(held.policy, policy) ||
      (held.dnsClosedIn === address.pid) !== !allowsDns(policy)
    );
  }

  /** Forgets a session whose sandbox is gone. */
  async forget(sessionId: string): Promise<void> {
    if (!this.sessions.has(sessionId)) return;
    await this.serialised(async () => {
      this.sessions.delete(sessionId);
      await this.write();
    });
  }

  private serialised(step: () => Promise<void>): Promise<void> {
    const next = this.queue.then(step, step);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async write(): Promise<void> {
    const input = restoreInput(this.nodeId, this.sessions, this.proxy);
    // The first write also removes what an earlier agent of this node left (its sessions'
    // chains), and hooks the node's chains into the shared ones.
    if (this.written === undefined) {
      this.written = { filter: await this.existingChains('filter'), nat: new Set() };
      if (this.proxy !== undefined) this.written.nat = await this.existingChains('nat');
      await this.run.restore(input);
      await this.ensureJump('filter', SESSIONS_CHAIN, this.chains.node);
      if (this.proxy !== undefined) {
        await this.ensureJump('filter', PROXY_CHAIN, this.chains.proxy);
        await this.ensureJump('nat', SESSIONS_CHAIN, this.chains.node);
      }
    } else {
      await this.run.restore(input);
    }
    const restricted = [...this.sessions].filter(([, held]) => !isAllowAll(held.policy));
    const now: Record<Table, Set<string>> = {
      filter: new Set(restricted.map(([id]) => this.chains.session(id))),
      nat: new Set(
        this.proxy === undefined
          ? []
          : restricted
              .filter(([, held]) => needsProxy(held.policy))
              .map(([id]) => this.chains.session(id)),
      ),
    };
    for (const table of ['filter', 'nat'] as const) {
      for (const chain of this.written[table]) {
        if (now[table].has(chain)) continue;
        await this.run.iptables(['-t', table, '-F', chain]).catch(() => undefined);
        await this.run.iptables(['-t', table, '-X', chain]).catch((err: unknown) => {
          this.logger.warn({ err, chain, table }, 'could not remove an egress chain');
        });
      }
    }
    this.written = now;
  }

  private async ensureJump(table: Table, from: string, to: string): Promise<void> {
    const jump = ['-t', table];
    const present = await this.run.iptables([...jump, '-C', from, '-j', to]).then(
      () => true,
      () => false,
    );
    if (!present) await this.run.iptables([...jump, '-A', from, '-j', to]);
  }

  private async existingChains(table: Table): Promise<Set<string>> {
    const listing = (await this.run.iptables(['-t', table, '-S']).catch(() => undefined)) as
      { stdout?: string } | undefined;
    const chains = (listing?.stdout ?? '')
      .split('\n')
      .map((line) => /^-N (\S+)$/.exec(line.trim())?.[1])
      .filter((chain): chain is string => chain?.startsWith(this.chains.prefix) === true);
    return new Set(chains);
  }

  /** Docker's DNS, inside the sandbox's own network namespace: open, or refused. */
  private async setDns(pid: number, open: boolean): Promise<void> {
    await this.run.iptables(['-N', DNS_CHAIN], pid).catch(() => undefined);
    await this.run.iptables(['-F', DNS_CHAIN], pid);
    const jump = ['OUTPUT', '-d', `${DOCKER_DNS}/32`, '-j', DNS_CHAIN];
    const present = await this.run.iptables(['-C', ...jump], pid).then(
      () => true,
      () => false,
    );
    if (!present) await this.run.iptables(['-I', ...jump], pid);
    if (!open) {
      await this.run.iptables(
        ['-A', DNS_CHAIN, '-j', 'REJECT', '--reject-with', 'icmp-admin-prohibited'],
        pid,
      );
    }
  }
}

interface Entry {
  sessionId: string;
  address: SandboxAddress;
  policy: EgressPolicy;
}

/**
 * Removes every rule of a node that is gone for good (its chains and the jump to them). Never
 * at an agent's stop: its sandboxes outlive it, and so must their policies.
 */
export async function removeNodeEgress(nodeId: string, run: Iptables = iptables): Promise<void> {
  const chains = nodeChains(nodeId);
  await run(['-t', 'filter', '-D', SESSIONS_CHAIN, '-j', chains.node]).catch(() => undefined);
  await run(['-t', 'filter', '-D', PROXY_CHAIN, '-j', chains.proxy]).catch(() => undefined);
  await run(['-t', 'nat', '-D', SESSIONS_CHAIN, '-j', chains.node]).catch(() => undefined);
  for (const table of ['filter', 'nat'] as const) {
    const listing = (await run(['-t', table, '-S']).catch(() => undefined)) as
      { stdout?: string } | undefined;
    const owned = (listing?.stdout ?? '')
      .split('\n')
      .map((line) => /^-N (\S+)$/.exec(line.trim())?.[1])
      .filter(
        (chain): chain is string =>
          chain !== undefined &&
          (chain === chains.node || chain === chains.proxy || chain.startsWith(chains.prefix)),
      );
    for (const chain of owned) await run(['-t', table, '-F', chain]).catch(() => undefined);
    for (const chain of owned) await run(['-t', table, '-X', chain]).catch(() => undefined);
  }
}
