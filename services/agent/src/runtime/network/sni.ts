/*
 * The name a connection asks for, from its first bytes: the server name of a TLS ClientHello
 * (RFC 8446 4.1.2, RFC 6066 3) or the Host of an HTTP/1 request head. Pure parsing of bytes a
 * sandbox sent: every length is checked against what was read.
 */

/** What the first bytes say: a name, not enough bytes yet, or none to be found. */
export type FirstBytes = { name: string } | 'incomplete' | 'none';

/** Largest first flight read for a name (a ClientHello with many extensions fits). */
export const MAX_FIRST_BYTES = 16 * 1024;

const HOST_NAME = /^[a-z0-9.-]{1,253}$/;

function cleanName(raw: string): string | undefined {
  const name = raw.trim().toLowerCase().replace(/\.$/, '');
  return HOST_NAME.test(name) ? name : undefined;
}

/** The server name of a TLS ClientHello at the start of `data`. */
export function tlsServerName(data: Buffer): FirstBytes {
  if (data.length < 5) return 'incomplete';
  if (data[0] !== 0x16) return 'none'; // not a handshake record
  const recordLength = data.readUInt16BE(3);
  if (data.length < 5 + recordLength) return data.length >= MAX_FIRST_BYTES ? 'none' : 'incomplete';
  const hello = data.subarray(5, 5 + recordLength);
  if (hello.length < 4 || hello[0] !== 0x01) return 'none'; // not a ClientHello
  const helloLength = hello.readUIntBE(1, 3);
  const body = hello.subarray(4, 4 + helloLength);
  if (body.length < helloLength) return 'none'; // split over records: not followed here
  let at = 2 + 32; // version, random
  if (body.length < at + 1) return 'none';
  at += 1 + (body[at] ?? 0); // session id
  if (body.length < at + 2) return 'none';
  at += 2 + body.readUInt16BE(at); // cipher suites
  if (body.length < at + 1) return 'none';
  at += 1 + (body[at] ?? 0); // compression methods
  if (body.length < at + 2) return 'none';
  const extensionsEnd = at + 2 + body.readUInt16BE(at);
  at += 2;
  if (body.length < extensionsEnd) return 'none';
  while (at + 4 <= extensionsEnd) {
    const type = body.readUInt16BE(at);
    const length = body.readUInt16BE(at + 2);
    const extension = body.subarray(at + 4, at + 4 + length);
    if (extension.length < length) return 'none';
    if (type === 0x0000) return serverNameOf(extension);
    at += 4 + length;
  }
  return 'none';
}

/** The host_name entry of a server_name extension. */
function serverNameOf(extension: Buffer): FirstBytes {
  if (extension.length < 2) return 'none';
  const listEnd = Math.min(extension.length, 2 + extension.readUInt16BE(0));
  let at = 2;
  while (at + 3 <= listEnd) {
    const type = extension[at];
    const length = extension.readUInt16BE(at + 1);
    const value = extension.subarray(at + 3, at + 3 + length);
    if (value.length < length) return 'none';
    if (type === 0) {
      const name = cleanName(value.toString('latin1'));
      return name === undefined ? 'none' : { name };
    }
    at += 3 + length;
  }
  return 'none';
}

/** The Host of an HTTP/1 request head at the start of `data` (without its port). */
export function httpHost(data: Buffer): FirstBytes {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return data.length >= MAX_FIRST_BYTES ? 'none' : 'incomplete';
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  if (!/^[A-Z]+ \S+ HTTP\/1\.[01]$/.test(lines[0] ?? '')) return 'none';
  const hosts = lines.slice(1).filter((line) => /^host:/i.test(line));
  if (hosts.length !== 1) return 'none'; // none, or two that could be read apart
  const value = (hosts[0] ?? '').slice(5).trim();
  const host = value.startsWith('[') ? undefined : value.replace(/:\d{1,5}$/, '');
  const name = host === undefined ? undefined : cleanName(host);
  return name === undefined ? 'none' : { name };
}
