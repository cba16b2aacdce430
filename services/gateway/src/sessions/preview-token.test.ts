import { hashPreviewToken, newPreviewToken, previewTokenMatches } from './preview-token';

describe('preview tokens', () => {
  it('match only the token they were made from', () => {
    const token = newPreviewToken();
    expect(token).toMatch(/^pvt_[A-Za-z0-9_-]{32}$/);
    const hash = hashPreviewToken(token);
    expect(previewTokenMatches(token, hash)).toBe(true);
    expect(previewTokenMatches(newPreviewToken(), hash)).toBe(false);
    expect(previewTokenMatches(undefined, hash)).toBe(false);
    expect(previewTokenMatches('x'.repeat(1000), hash)).toBe(false);
  });
});
