import { SESSION_ID_BODY, sessionIdOfLabel } from '@sandbox/contract';

/** A preview request's destination, parsed from its Host header. */
export interface PreviewAddress {
  sessionId: string;
  port: number;
}

export const DEFAULT_PREVIEW_PORT = 3000;
const LABEL = new RegExp(`^(?:(\\d{1,5})-)?ses-(${SESSION_ID_BODY})$`);

/**
 * `ses-<id>.{domain}` → port 3000 of session `ses_<id>`; `<port>-ses-<id>.{domain}` → that
 * port. Anything else (another domain, nested labels, bad ports) is not a preview host.
 */
export function parsePreviewHost(
  host: string | undefined,
  previewDomain: string,
): PreviewAddress | undefined {
  if (host === undefined) return undefined;
  const name = host.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  const domain = previewDomain.toLowerCase().replace(/:\d+$/, '');
  const suffix = `.${domain}`;
  if (!name.endsWith(suffix)) return undefined;
  const match = LABEL.exec(name.slice(0, -suffix.length));
  if (match === null) return undefined;
  const [, portText, id] = match;
  const port = portText === undefined ? DEFAULT_PREVIEW_PORT : Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  return { sessionId: sessionIdOfLabel(id as string), port };
}
