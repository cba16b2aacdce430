import type { ServerResponse } from 'node:http';
import { toAppError } from '@sandbox/errors';

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const TITLES: Record<number, string> = {
  403: 'Private preview',
  404: 'Preview not found',
  502: 'Nothing is listening',
  503: 'Preview temporarily unavailable',
};

/** A small HTML error page for people opening a preview in a browser. */
export function sendErrorPage(res: ServerResponse, err: unknown): void {
  const appError = toAppError(err);
  const status = appError.httpStatus;
  const title = TITLES[status] ?? 'Preview error';
  const body = `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head>
<body style="font-family:system-ui;margin:4rem auto;max-width:36rem">
<h1>${title}</h1><p>${escapeHtml(appError.message)}</p><p><small>${appError.code}</small></p>
</body></html>`;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...(appError.retryAfter === undefined ? {} : { 'retry-after': String(appError.retryAfter) }),
  });
  res.end(body);
}
