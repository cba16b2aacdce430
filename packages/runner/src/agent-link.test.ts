import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUNNER_FRONT_PATH, RUNNER_LINK_ENV } from '@sandbox/contract/run';
import { frontParent, openAgentLink, takeAgentLink } from './agent-link';

describe('takeAgentLink', () => {
  it('takes the socket and the token out of the environment: no run inherits them', () => {
    const env = {
      PATH: '/bin',
      [RUNNER_LINK_ENV.socket]: '/run/sandbox/link/agent.sock',
      [RUNNER_LINK_ENV.token]: 't0ken',
    };
    expect(takeAgentLink(env)).toEqual({ path: '/run/sandbox/link/agent.sock', token: 't0ken' });
    expect(env).toEqual({ PATH: '/bin' });
  });

  it('is undefined when the agent asked for no link, or for half of one', () => {
    expect(takeAgentLink({ PATH: '/bin' })).toBeUndefined();
    const half = { [RUNNER_LINK_ENV.socket]: '/s', [RUNNER_LINK_ENV.token]: '' };
    expect(takeAgentLink(half)).toBeUndefined();
    expect(half).toEqual({});
  });
});

describe('openAgentLink', () => {
  it('says the token first, then carries the protocol both ways', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'agent-link-')), 'agent.sock');
    const agentSide = new Promise<Socket>((resolve) => {
      const server = createServer((socket) => {
        server.close();
        resolve(socket);
      }).listen(path);
    });
    const socket = await openAgentLink({ path, token: 'abc' });
    const agent = await agentSide;
    const heard = new Promise<string>((resolve) => {
      let text = '';
      agent.on('data', (chunk: Buffer) => {
        text += String(chunk);
        if (text.endsWith('{"id":1,"op":"ping"}\n')) resolve(text);
      });
    });
    socket.write('{"id":1,"op":"ping"}\n');
    expect(await heard).toBe('abc\n{"id":1,"op":"ping"}\n');
    socket.destroy();
    agent.destroy();
  });

  it('rejects when no agent listens (the runner then serves over stdio)', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'agent-link-')), 'agent.sock');
    await expect(openAgentLink({ path, token: 'abc' })).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('frontParent', () => {
  const procWith = (cmdlines: Record<number, string>) => {
    const root = mkdtempSync(join(tmpdir(), 'proc-'));
    for (const [pid, cmdline] of Object.entries(cmdlines)) {
      mkdirSync(join(root, pid));
      writeFileSync(join(root, pid, 'cmdline'), cmdline);
    }
    return root;
  };

  it("is the parent when the parent is the runner's front", () => {
    const proc = procWith({ 7: `${RUNNER_FRONT_PATH}\0`, 8: 'sh\0-c\0x\0' });
    expect(frontParent(7, proc)).toBe(7);
    expect(frontParent(8, proc)).toBeUndefined();
  });

  it('is undefined for a parent named like the front with more arguments, or gone', () => {
    const proc = procWith({ 9: `${RUNNER_FRONT_PATH}\0--other\0` });
    expect(frontParent(9, proc)).toBeUndefined();
    expect(frontParent(10, proc)).toBeUndefined();
  });
});
