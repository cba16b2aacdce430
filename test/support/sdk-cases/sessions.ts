import { createHash, randomBytes } from 'node:crypto';
import {
  FileNotFoundError,
  ForbiddenError,
  InvalidPathError,
  InvalidRequestError,
  Sandbox,
  SessionNotFoundError,
  UnauthorizedError,
} from '@sandbox/sdk';
import { createAccount } from '../api';
import { previewRequest, startPreviewApp } from '../preview-app';
import { refused, SocketTerminal } from '../terminal-socket';
import type { SdkContext } from './context';

/** Create, read, list (past one page), connect, fork and delete. */
function sessions({ t, client }: SdkContext): void {
  describe('sessions', () => {
    it('creates, reads, lists, connects to and deletes a session', async () => {
      const sandbox = await Sandbox.create({ ...client(), metadata: { owner: 'sdk-test' } });
      expect(sandbox.id).toMatch(/^ses_[a-z0-9]{24}$/);
      const info = await sandbox.info();
      expect(info).toMatchObject({
        sessionId: sandbox.id,
        state: 'active',
        metadata: { owner: 'sdk-test' },
      });
      const page = await Sandbox.list({ ...client(), limit: 100 });
      expect(page.data.map((s) => s.sessionId)).toContain(sandbox.id);

      const again = await Sandbox.connect(sandbox.id, client());
      expect(again.previewUrl()).toBe(sandbox.previewUrl());
      expect((await again.exec('echo same')).stdout).toBe('same\n');

      await sandbox.delete();
      await sandbox.delete(); // already gone: done, not an error
      const gone = await Sandbox.connect(sandbox.id, client()).catch((err: unknown) => err);
      expect(gone).toBeInstanceOf(SessionNotFoundError);
      expect(gone).toMatchObject({ code: 'session_not_found', status: 404 });
      expect((gone as SessionNotFoundError).requestId).toEqual(expect.any(String));
    });

    it('forks a session into Sandbox objects with its files, and refuses a bad count', async () => {
      const sandbox = await Sandbox.create({ ...client(), metadata: { owner: 'sdk-fork' } });
      await sandbox.files.write('kept.txt', 'before the fork');
      const forks = await sandbox.fork({ count: 2 });
      expect(forks.processesKept).toBe(false);
      expect(forks.map((fork) => fork.id)).not.toContain(sandbox.id);
      expect(new Set(forks.map((fork) => fork.id)).size).toBe(2);
      for (const fork of forks) {
        expect(await fork.files.readText('kept.txt')).toBe('before the fork');
        expect(await fork.info()).toMatchObject({ metadata: { owner: 'sdk-fork' } });
        expect(fork.previewUrl()).toContain(fork.id.replace('_', '-'));
        await fork.delete();
      }
      await expect(sandbox.fork({ count: 11 })).rejects.toBeInstanceOf(InvalidRequestError);
      await sandbox.delete();
    });

    it('lists every session past one page, and deletes one by its id (issue 42)', async () => {
      const own = await createAccount(t.stack, 'paid');
      const mine = { ...client(), apiKey: own.key };
      const made = await Promise.all([1, 2, 3].map(() => Sandbox.create(mine)));
      const ids: string[] = [];
      for await (const session of Sandbox.list({ ...mine, limit: 1 })) ids.push(session.sessionId);
      expect(ids.sort()).toEqual(made.map((s) => s.id).sort());
      const page = await Sandbox.listPage({ ...mine, limit: 1 });
      expect(page.data).toHaveLength(1);
      expect(page.pagination).toMatchObject({ total: 3, hasMore: true });

      for (const sandbox of made) await Sandbox.delete(sandbox.id, mine);
      await Sandbox.delete(made[0]!.id, mine); // already gone: done, not an error
      expect(await Sandbox.list(mine).toArray()).toEqual([]);
      await expect(Sandbox.connect(made[1]!.id, mine)).rejects.toBeInstanceOf(SessionNotFoundError);
    });
  });
}

/** A session's egress policy, and refusals mapped to error classes. */
function sessionEgressAndRefusals({ t, client }: SdkContext): void {
  describe('session egress and refusals', () => {
    it("reads and replaces a session's egress policy", async () => {
      const sandbox = await Sandbox.create({ ...client(), egress: { default: 'deny' } });
      expect(await sandbox.egress()).toEqual({
        sessionId: sandbox.id,
        default: 'deny',
        allow: [],
        deny: [],
      });
      // Nothing gets through, not even Docker's DNS (asked for this container: nothing leaves).
      const dns = `getent hosts sbx-${sandbox.id} >/dev/null && echo dns || echo refused`;
      expect((await sandbox.exec(dns)).stdout).toBe('refused\n');
      const changed = await sandbox.setEgress({ allow: [], deny: ['198.51.100.0/24'] });
      expect(changed).toMatchObject({ default: 'allow', deny: ['198.51.100.0/24'] });
      expect((await sandbox.exec(dns)).stdout).toBe('dns\n');
      await expect(sandbox.setEgress({ allow: ['nope nope'] })).rejects.toMatchObject({
        code: 'invalid_request',
      });
      await sandbox.delete();
    });

    it('maps refusals to error classes', async () => {
      const badKey = await Sandbox.list({ ...client(), apiKey: 'sk_live_nope' }).catch(
        (e: unknown) => e,
      );
      expect(badKey).toBeInstanceOf(UnauthorizedError);
      const free = await createAccount(t.stack, 'free');
      const forbidden = await Sandbox.create({
        ...client(),
        apiKey: free.key,
        resourceLimits: { memory: 512 },
      }).catch((e: unknown) => e);
      expect(forbidden).toBeInstanceOf(ForbiddenError);
      expect((forbidden as ForbiddenError).details).toMatchObject({ field: 'resourceLimits' });
    });
  });
}

/** Text, bytes, listing, bad paths, and a 20 MB file as streams. */
function files({ useSandbox }: SdkContext): void {
  describe('files', () => {
    const box = useSandbox();

    it('writes and reads text and bytes, lists, and refuses bad paths', async () => {
      await box.sandbox.files.write('notes/a.txt', 'héllo');
      const bytes = Uint8Array.from([0, 255, 1, 254]);
      expect(await box.sandbox.files.write('bin/b.dat', bytes)).toEqual({
        path: 'bin/b.dat',
        size: 4,
      });
      expect(await box.sandbox.files.readText('notes/a.txt')).toBe('héllo');
      expect(Array.from(await box.sandbox.files.read('bin/b.dat'))).toEqual([0, 255, 1, 254]);
      const listed = await box.sandbox.files.list();
      expect(listed.files.map((f) => f.path).sort()).toEqual(['bin/b.dat', 'notes/a.txt']);
      await expect(box.sandbox.files.read('nope.txt')).rejects.toBeInstanceOf(FileNotFoundError);
      await expect(box.sandbox.files.write('../escape', 'x')).rejects.toBeInstanceOf(
        InvalidPathError,
      );
    });

    it('round-trips a 20 MB file as streams, by hash, with progress', async () => {
      const chunks = Array.from({ length: 20 }, () => randomBytes(1_000_000));
      const hash = createHash('sha256');
      for (const chunk of chunks) hash.update(chunk);
      let i = 0;
      const source = new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = chunks[i++];
          if (next === undefined) controller.close();
          else controller.enqueue(next);
        },
      });
      const progress: number[] = [];
      const written = await box.sandbox.files.write('big.bin', source, {
        onProgress: (sent) => progress.push(sent),
      });
      expect(written.size).toBe(20_000_000);
      expect(progress.at(-1)).toBe(20_000_000);
      expect(progress.length).toBeGreaterThan(1);

      const back = createHash('sha256');
      let size = 0;
      const reader = (await box.sandbox.files.readStream('big.bin')).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        back.update(value);
      }
      expect(size).toBe(20_000_000);
      expect(back.digest('hex')).toBe(hash.digest('hex'));
    });
  });
}

/** A terminal's URL opens a shell once. */
function terminals({ client }: SdkContext): void {
  describe('terminals', () => {
    it('makes a terminal whose URL opens a shell once', async () => {
      const sandbox = await Sandbox.create(client());
      try {
        const terminal = await sandbox.terminals.create({ cols: 90, rows: 25 });
        expect(terminal.url).toMatch(
          /^ws:\/\/127\.0\.0\.1:\d+\/v1\/sessions\/ses_\w+\/terminals\/term_\w+\/connect\?token=tty_/,
        );
        const opened = await SocketTerminal.open(terminal.url);
        if (refused(opened)) throw new Error(`refused: ${opened.status}`);
        opened.type('stty size\r');
        await opened.until(/25 90\r\n/);
        opened.ws.close();
        expect(refused(await SocketTerminal.open(terminal.url))).toBe(true);
      } finally {
        await sandbox.delete();
      }
    });
  });
}

/** The preview URL of a port, and the private preview header. */
function previews({ t, client }: SdkContext): void {
  describe('previews', () => {
    it('gives the preview URL of a port and the private preview header', async () => {
      const sandbox = await Sandbox.create({ ...client(), preview: { private: true } });
      try {
        expect(sandbox.previewToken).toEqual(expect.any(String));
        const host = sandbox.id.replace('_', '-');
        expect(new URL(sandbox.previewUrl()).hostname).toBe(`${host}.preview.test`);
        expect(new URL(sandbox.previewUrl(8080)).hostname).toBe(`8080-${host}.preview.test`);
        await startPreviewApp(t.stack.url, client().apiKey, sandbox.id, [3000]);
        const edge = t.stack.edge?.url ?? '';
        const hostOf = (url: string) => new URL(url).host;
        expect((await previewRequest(edge, hostOf(sandbox.previewUrl()))).status).toBe(403);
        const open = await previewRequest(
          edge,
          hostOf(sandbox.previewUrl()),
          '/',
          sandbox.previewHeaders(),
        );
        expect(open.status).toBe(200);
      } finally {
        await sandbox.delete();
      }
    });
  });
}

/** Sessions, their files, terminals and previews, through the SDK. */
export const sessionCases: ((t: SdkContext) => void)[] = [
  sessions,
  sessionEgressAndRefusals,
  files,
  terminals,
  previews,
];
