import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** A certificate's base64 body, without its armour or line breaks: the same cert compares equal. */
function body(pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
}

/** The certificates of `pem` that Node does not already trust (its bundled roots). */
export function untrustedByNode(pem: string): string[] {
  const bundled = new Set(rootCertificates.map(body));
  return (pem.match(PEM_CERTIFICATE) ?? []).filter((cert) => !bundled.has(body(cert)));
}

/**
 * The extra CA bundle the sandboxes get as NODE_EXTRA_CA_CERTS: only the operator's
 * certificates that Node does not trust already. A whole system bundle (often what is
 * configured) costs every Node start in a sandbox tens of ms of CPU to parse, for the same
 * trust. Written beside the workspaces (not again when it is there already); when it cannot
 * be written (the disk is full, say), the operator's bundle itself, as trusting, only slower.
 * Undefined when nothing is left to add.
 */
export function sandboxExtraCaBundle(
  source: string | undefined,
  dir: string,
  onUnwritable: (err: unknown) => void = () => undefined,
): string | undefined {
  if (source === undefined) return undefined;
  const extra = untrustedByNode(readFileSync(source, 'utf8'));
  if (extra.length === 0) return undefined;
  const target = join(dir, '.sandbox-extra-ca.pem');
  const content = `${extra.join('\n')}\n`;
  if (readIfThere(target) === content) return target;
  try {
    writeFileSync(`${target}.tmp`, content, { mode: 0o644 });
    renameSync(`${target}.tmp`, target);
    return target;
  } catch (err) {
    rmSync(`${target}.tmp`, { force: true, recursive: true });
    onUnwritable(err);
    return source;
  }
}

function readIfThere(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
