import { parsePreviewHost } from './preview-host';

const id = 'abcdefghijklmnopqrstuv12';

describe('parsePreviewHost', () => {
  it.each([
    [`ses-${id}.preview.test`, { sessionId: `ses_${id}`, port: 3000 }],
    [`ses-${id}.preview.test:8081`, { sessionId: `ses_${id}`, port: 3000 }],
    [`SES-${id.toUpperCase()}.Preview.Test`, { sessionId: `ses_${id}`, port: 3000 }],
    [`5173-ses-${id}.preview.test`, { sessionId: `ses_${id}`, port: 5173 }],
    [`ses-${id}.preview.test.`, { sessionId: `ses_${id}`, port: 3000 }],
  ])('maps %s', (host, expected) => {
    expect(parsePreviewHost(host, 'preview.test')).toEqual(expected);
  });

  it.each([
    undefined,
    'preview.test',
    `ses-${id}.other.test`,
    `ses-${id}x.preview.test`,
    `x.ses-${id}.preview.test`,
    `0-ses-${id}.preview.test`,
    `70000-ses-${id}.preview.test`,
    `ses_${id}.preview.test`,
    `ses-${id}.evilpreview.test`,
  ])('refuses %s', (host) => {
    expect(parsePreviewHost(host, 'preview.test')).toBeUndefined();
  });
});
