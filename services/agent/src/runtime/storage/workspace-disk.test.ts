import { workspaceMkfsArgs } from './workspace-disk';

describe('workspaceMkfsArgs', () => {
  it('formats with lazy init and no reserved blocks, the root owned as asked', () => {
    expect(workspaceMkfsArgs('/d/ws.img.tmp', { uid: 100999, gid: 100998 }).join(' ')).toBe(
      '-q -F -m 0 -E root_owner=100999:100998,lazy_itable_init=1,lazy_journal_init=1 /d/ws.img.tmp',
    );
  });

  it("leaves the root to mkfs's default without an owner", () => {
    expect(workspaceMkfsArgs('/tmp/disk').join(' ')).toBe(
      '-q -F -m 0 -E lazy_itable_init=1,lazy_journal_init=1 /tmp/disk',
    );
  });
});
