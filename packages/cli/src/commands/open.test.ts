import { fakeCli, fakeSandbox } from '../testing/fake-cli';

const SID = 'ses_aaaaaaaaaaaaaaaaaaaaaaaa';

describe('sandbox open', () => {
  it("prints the preview URL of a port; a private preview's header line after it", async () => {
    const connect = jest.fn((_id: string, options: { previewToken?: string } = {}) =>
      Promise.resolve(
        fakeSandbox({
          previewHeaders: () =>
            options.previewToken === undefined ? {} : { 'x-preview-token': options.previewToken },
        }),
      ),
    );
    const open = fakeCli({ connect });
    expect(await open.run('open', SID, '--port', '8080')).toBe(0);
    expect(open.stdout()).toBe('https://8080-aaaa.preview.test\n');
    const private_ = fakeCli({ connect });
    expect(await private_.run('open', SID, '--preview-token', 'tok')).toBe(0);
    expect(private_.stdout()).toBe('https://aaaa.preview.test\nx-preview-token: tok\n');
    expect(connect).toHaveBeenLastCalledWith(SID, { previewToken: 'tok' });
    const json = fakeCli({ connect });
    expect(await json.run('open', SID, '--preview-token', 'tok', '--json')).toBe(0);
    expect(JSON.parse(json.stdout())).toEqual({
      url: 'https://aaaa.preview.test',
      headers: { 'x-preview-token': 'tok' },
    });
  });

  it('refuses a port that is not one', async () => {
    expect(await fakeCli().run('open', SID, '--port', '70000')).toBe(2);
  });
});
