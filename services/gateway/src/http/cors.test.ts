import express from 'express';
import request from 'supertest';
import { apiCors } from './cors';

/** An app whose /v1 answers 401 to anything, as the real one does without a key. */
function appWith(origins: readonly string[]) {
  const app = express();
  const cors = apiCors(origins);
  if (cors !== undefined) app.use('/v1', cors);
  app.use('/v1', (_req, res) => {
    res.status(401).json({ error: { code: 'unauthorized', message: 'no key' } });
  });
  return app;
}

describe('CORS for pages', () => {
  it('answers nothing of CORS without configured origins', async () => {
    const preflight = await request(appWith([]))
      .options('/v1/sessions/create')
      .set('Origin', 'https://app.example.com')
      .set('Access-Control-Request-Method', 'POST');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(preflight.status).toBe(401);
  });

  it("answers a listed origin's preflight before any key, without credentials", async () => {
    const app = appWith(['https://app.example.com']);
    const preflight = await request(app)
      .options('/v1/sessions/create')
      .set('Origin', 'https://app.example.com')
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'authorization, content-type, idempotency-key');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(preflight.headers['access-control-allow-headers']).toMatch(/Authorization/);
    expect(preflight.headers['access-control-allow-headers']).toMatch(/Idempotency-Key/);
    expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
    // An error answered to the page is readable by it, with what the SDK reads.
    const refused = await request(app).get('/v1/sessions').set('Origin', 'https://app.example.com');
    expect(refused.status).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(refused.headers['access-control-expose-headers']).toMatch(/Retry-After/);
  });

  it('gives another origin no CORS answer', async () => {
    const preflight = await request(appWith(['https://app.example.com']))
      .options('/v1/sessions/create')
      .set('Origin', 'https://evil.example')
      .set('Access-Control-Request-Method', 'POST');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('allows any origin with *, still without credentials', async () => {
    const preflight = await request(appWith(['*']))
      .options('/v1/execute')
      .set('Origin', 'https://anywhere.example')
      .set('Access-Control-Request-Method', 'POST');
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
  });
});
