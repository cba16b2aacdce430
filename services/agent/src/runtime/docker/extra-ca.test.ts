import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { sandboxExtraCaBundle, untrustedByNode } from './extra-ca';

// Not a real certificate: only its armour and body matter here.
const OWN_CA = '-----BEGIN CERTIFICATE-----\nTUlJQm93bkNB\nb3duQ0E=\n-----END CERTIFICATE-----';

describe('the sandboxes extra CA bundle', () => {
  it('keeps only what Node does not trust already, however the PEM is wrapped', () => {
    const rewrapped = rootCertificates[0]!.replace(/\n/g, '\r\n');
    const pem = [rootCertificates[1], OWN_CA, rewrapped, rootCertificates[2]].join('\n');
    expect(untrustedByNode(pem)).toEqual([OWN_CA]);
  });

  it('writes the remainder beside the workspaces, or nothing when nothing remains', () => {
    const dir = mkdtempSync(join(tmpdir(), 'extra-ca-'));
    const system = join(dir, 'system.pem');
    writeFileSync(system, `${rootCertificates.join('\n')}\n${OWN_CA}\n`);
    const bundle = sandboxExtraCaBundle(system, dir);
    expect(bundle).toBe(join(dir, '.sandbox-extra-ca.pem'));
    expect(readFileSync(bundle!, 'utf8')).toBe(`${OWN_CA}\n`);
    writeFileSync(system, rootCertificates.slice(0, 5).join('\n'));
    expect(sandboxExtraCaBundle(system, dir)).toBeUndefined();
    expect(sandboxExtraCaBundle(undefined, dir)).toBeUndefined();
  });

  it('does not write it again when it is there, and falls back to the source when it cannot', () => {
    const dir = mkdtempSync(join(tmpdir(), 'extra-ca-'));
    const system = join(dir, 'system.pem');
    writeFileSync(system, `${rootCertificates.join('\n')}\n${OWN_CA}\n`);
    const bundle = sandboxExtraCaBundle(system, dir)!;
    const written = statSync(bundle).mtimeMs;
    // A write is impossible now (its temporary file's name is taken by a directory).
    mkdirSync(`${bundle}.tmp`);
    expect(sandboxExtraCaBundle(system, dir)).toBe(bundle);
    expect(statSync(bundle).mtimeMs).toBe(written);
    rmSync(bundle);
    mkdirSync(`${bundle}.tmp`, { recursive: true });
    const failures: unknown[] = [];
    expect(sandboxExtraCaBundle(system, dir, (err) => failures.push(err))).toBe(system);
    expect(failures).toHaveLength(1);
  });
});
