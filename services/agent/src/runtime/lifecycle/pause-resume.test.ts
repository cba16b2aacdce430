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
});
