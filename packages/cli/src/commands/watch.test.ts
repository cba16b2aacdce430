import type { FileWatchEnd, FileWatchEvent } from '@sandbox/sdk';
import { fakeCli, fakeSandbox } from '../testing/fake-cli';

const SID = 'ses_aaaaaaaaaaaaaaaaaaaaaaaa';

/** A watch of the SDK's shape that yields `events`, then ends as `ended`. */
function fakeWatch(events: FileWatchEvent[], ended: FileWatchEnd) {
  const watch = {
    directories: 3,
    ended: undefined as FileWatchEnd | undefined,
    async *[Symbol.asyncIterator]() {
      for (const event of events) {
        await Promise.resolve();
        yield event;
      }
      watch.ended = ended;
    },
  };
  return watch;
}

function cliWith(events: FileWatchEvent[], ended: FileWatchEnd) {
  const watch = jest.fn((_dir?: string, _options?: { recursive?: boolean }) =>
    Promise.resolve(fakeWatch(events, ended)),
  );
  const connect = () => Promise.resolve(fakeSandbox({ files: { watch } }));
  return { cli: fakeCli({ connect }), watch };
}

describe('sandbox watch', () => {
  it('prints a change a line, lost changes on stderr, and ends with the directory', async () => {
    const { cli, watch } = cliWith(
      [
        { type: 'change', change: 'create', path: 'src/a.ts', isDirectory: false },
        { type: 'change', change: 'create', path: 'src/lib', isDirectory: true },
        { type: 'overflow' },
        {
          type: 'change',
          change: 'rename',
          path: 'src/b.ts',
          oldPath: 'src/a.ts',
          isDirectory: false,
        },
      ],
      'removed',
    );
    expect(await cli.run('watch', SID, 'src', '-r')).toBe(0);
    expect(watch.mock.calls[0]?.[0]).toBe('src');
    expect(watch.mock.calls[0]?.[1]).toMatchObject({ recursive: true });
    expect(cli.stdout()).toBe('create  src/a.ts\ncreate  src/lib/\nrename  src/a.ts -> src/b.ts\n');
    expect(cli.stderr()).toContain('changes were lost');
    expect(cli.stderr()).toContain('the directory was removed');
  });

  it('prints one JSON event a line with --json, and exits 1 when the session went', async () => {
    const change = { type: 'change', change: 'write', path: 'f', isDirectory: false } as const;
    const { cli, watch } = cliWith([change], 'stopped');
    expect(await cli.run('watch', SID, '--json')).toBe(1);
    expect(watch.mock.calls[0]?.[0]).toBeUndefined();
    expect(watch.mock.calls[0]?.[1]).toMatchObject({ recursive: false });
    expect(JSON.parse(cli.stdout())).toEqual(change);
    expect(cli.stderr()).toContain('the session went away');
  });
});
