import { SessionUse } from '../session-use';
import { doubles } from './in-memory-doubles';
import { pauseSandbox, resumeSandbox } from './pause-resume';

describe('pause and resume', () => {
  it('freezes a running sandbox and thaws it again', async () => {
    const d = doubles();
    d.containers.put('ses_1', 'running');
    expect(await pauseSandbox(d, 'ses_1')).toMatchObject({ status: 'paused' });
    expect(await pauseSandbox(d, 'ses_1')).toMatchObject({ status: 'paused' });
    expect(await resumeSandbox(d, 'ses_1')).toMatchObject({ status: 'running' });
    expect(d.journal).toEqual(['container.pause ses_1', 'container.unpause ses_1']);
  });

  it('answers session_not_found for a session without a sandbox', async () => {
    const d = doubles();
    await expect(pauseSandbox(d, 'ses_1')).rejects.toMatchObject({ code: 'session_not_found' });
    await expect(resumeSandbox(d, 'ses_1')).rejects.toMatchObject({ code: 'session_not_found' });
  });

  it('leaves a session in use running: a request now or within the delay', async () => {
    const d = doubles();
    d.containers.put('ses_1', 'running');
    const use = new SessionUse();
    let finish!: () => void;
    const request = use.track('ses_1', () => new Promise<void>((resolve) => (finish = resolve)));
    const guard = { use, unusedForMs: 60_000 };
    expect(await pauseSandbox(d, 'ses_1', guard)).toMatchObject({ status: 'running' });
    finish();
    await request;
    expect(await pauseSandbox(d, 'ses_1', guard)).toMatchObject({ status: 'running' });
    expect(d.journal).toEqual([]);
    expect(await pauseSandbox(d, 'ses_1', { use, unusedForMs: 0 })).toMatchObject({
      status: 'paused',
    });
  });

  it('thaws the sandbox again when a request starts while it is being frozen', async () => {
    const d = doubles();
    d.containers.put('ses_1', 'running');
    const use = new SessionUse();
    const pause = d.containers.pause.bind(d.containers);
    let request: Promise<void> | undefined;
    d.containers.pause = async (container) => {
      request = use.track('ses_1', () => Promise.resolve());
      await pause(container);
    };
    expect(await pauseSandbox(d, 'ses_1', { use, unusedForMs: 0 })).toMatchObject({
      status: 'running',
    });
    await request;
    expect(d.journal).toEqual(['container.pause ses_1', 'container.unpause ses_1']);
  });
});
