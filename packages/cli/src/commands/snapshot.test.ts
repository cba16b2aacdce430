import { fakeCli, fakeSandbox } from '../testing/fake-cli';

const taken = {
  snapshotId: 'snap_aaaaaaaaaaaaaaaaaaaaaaaa',
  sessionId: 'ses_aaaaaaaaaaaaaaaaaaaaaaaa',
  name: 'base',
  sizeBytes: 42,
  processesKept: false,
  createdAt: '2026-11-29T00:00:00.000Z',
};

describe('sandbox snapshot, snapshots and create --snapshot', () => {
  it("prints a snapshot's id alone on stdout", async () => {
    const snapshot = jest.fn(() => Promise.resolve(taken));
    const cli = fakeCli({ connect: () => Promise.resolve(fakeSandbox({ snapshot })) });
    expect(await cli.run('snapshot', taken.sessionId, '--name', 'base', '--processes')).toBe(0);
    expect(cli.stdout()).toBe(`${taken.snapshotId}\n`);
    expect(snapshot).toHaveBeenCalledWith({ name: 'base', processes: true });
  });

  it('lists every page of snapshots and deletes them', async () => {
    const list = jest.fn((page: { offset: number }) =>
      Promise.resolve({
        data: page.offset === 0 ? [taken] : [],
        pagination: { total: 1, limit: 100, offset: page.offset, hasMore: false },
      }),
    );
    const remove = jest.fn(() => Promise.resolve());
    const cli = fakeCli({ snapshots: () => ({ list, delete: remove }) });
    expect(await cli.run('snapshots', 'ls', '--json')).toBe(0);
    expect(JSON.parse(cli.stdout())).toEqual([taken]);
    const rm = fakeCli({ snapshots: () => ({ list, delete: remove }) });
    expect(await rm.run('snapshots', 'rm', taken.snapshotId)).toBe(0);
    expect(remove).toHaveBeenCalledWith(taken.snapshotId);
    expect(rm.stdout()).toBe(`deleted ${taken.snapshotId}\n`);
  });

  it('creates a session from a snapshot', async () => {
    const create = jest.fn(() => Promise.resolve(fakeSandbox()));
    const cli = fakeCli({ create });
    expect(await cli.run('create', '--snapshot', taken.snapshotId)).toBe(0);
    expect(create).toHaveBeenCalledWith(expect.objectContaining({ snapshotId: taken.snapshotId }));
  });
});
