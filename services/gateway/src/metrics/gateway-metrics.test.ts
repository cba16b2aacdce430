import { routeLabel } from './gateway-metrics';

describe('routeLabel', () => {
  it("prefixes a mounted router's route with its mount", () => {
    expect(routeLabel('/v1/sessions/ses_1?x=1', '/sessions/:sessionId')).toBe(
      '/v1/sessions/:sessionId',
    );
    expect(routeLabel('/admin/v1/nodes/n1/drain', '/nodes/:nodeId/drain')).toBe(
      '/admin/v1/nodes/:nodeId/drain',
    );
  });

  it('keeps a route registered with its whole path', () => {
    expect(routeLabel('/internal/v1/previews/ses_1', '/internal/v1/previews/:sessionId')).toBe(
      '/internal/v1/previews/:sessionId',
    );
    expect(routeLabel('/healthz', '/healthz')).toBe('/healthz');
  });
});
