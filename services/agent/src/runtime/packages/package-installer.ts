import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@sandbox/logger';
import { InstallFailed } from './installer-container';

export { InstallFailed };

export interface PackageRequest {
  name: string;
  spec: string;
}

/** What installs packages: npm, somewhere else than on the node (installer-container.ts). */
export interface Npm {
  /** The tar.gz of a node_modules with `specs` installed; throws InstallFailed. */
  install(specs: readonly string[], timeoutMs: number): Promise<Buffer>;
  /** Gets ready for the first install (done by the first install otherwise). */
  prepare?(): Promise<unknown>;
  close?(): void;
}

export interface PackageInstallerOptions {
  cacheDir: string;
  npm: Npm;
  logger: Logger;
}

/** An npm package name, optionally scoped. */
const PACKAGE_NAME = /^(?:@[a-z0-9][\w.~-]*\/)?[a-z0-9][\w.~-]*$/i;
/**
 * A version, range or dist-tag from the registry: no `:` or `/` (URLs, git, GitHub, aliases,
 * paths) and no leading `.` (a directory).
 */
const REGISTRY_SPEC = /^(?![.])[\w.+^~<>=| *-]{1,256}$/;

/**
 * Refuses what is not a registry package: the list comes from inside a sandbox (the names its
 * code imports, the versions its package.json pins). A pin like `http://…` or `git+ssh://…`
 * would be refused by the installer's proxy anyway; refused here, the error says why.
 */
export function checkRegistryPackages(packages: readonly PackageRequest[]): void {
  for (const { name, spec } of packages) {
    if (name.length > 214 || !PACKAGE_NAME.test(name) || !REGISTRY_SPEC.test(spec)) {
      throw new InstallFailed(
        `Cannot install ${name}@${spec}: only registry packages with a version, range or tag can be installed automatically\n`,
        false,
      );
    }
  }
}

const EXACT_VERSION = /^\d+\.\d+\.\d+(?:-[\w.]+)?$/;
/** A bundle of ranges (e.g. `latest`) is rebuilt after this long, to pick up new releases. */
const RANGE_BUNDLE_TTL_MS = 6 * 60 * 60 * 1000;

/**
 * Installs packages for sandboxes with a cache shared by every session of the node: npm's cache
 * plus a ready bundle (tar.gz of node_modules) per set of packages, so that a second session
 * importing the same packages gets them in milliseconds. npm runs in a throwaway installer
 * container that reaches only the registry, with `--ignore-scripts`: no package code ever runs
 * outside a sandbox, and only installers fill the cache, so one session cannot poison
 * another's packages.
 */
export class PackageInstaller {
  private readonly inFlight = new Map<string, Promise<Buffer>>();

  constructor(private readonly options: PackageInstallerOptions) {}

  /** Gets the installer ready ahead of the first install; a failure is logged (and retried). */
  prepare(): void {
    this.options.npm.prepare?.().catch((err: unknown) => {
      this.options.logger.warn(
        { err },
        'package installer not ready: retried at the first install',
      );
    });
  }

  close(): void {
    this.options.npm.close?.();
  }

  /** The bundle for `packages` (from the cache when fresh); throws InstallFailed. */
  async bundle(packages: readonly PackageRequest[], timeoutMs: number): Promise<Buffer> {
    checkRegistryPackages(packages);
    const specs = packages.map((p) => `${p.name}@${p.spec}`).sort();
    const key = createHash('sha256').update(specs.join('\n')).digest('hex').slice(0, 32);
    let pending = this.inFlight.get(key);
    if (pending === undefined) {
      pending = this.build(key, specs, timeoutMs).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async build(key: string, specs: string[], timeoutMs: number): Promise<Buffer> {
    const bundles = join(this.options.cacheDir, 'bundles');
    const file = join(bundles, `${key}.tgz`);
    const exact = specs.every((spec) => EXACT_VERSION.test(spec.slice(spec.lastIndexOf('@') + 1)));
    const cached = await stat(file).catch(() => undefined);
    if (cached !== undefined && (exact || Date.now() - cached.mtimeMs < RANGE_BUNDLE_TTL_MS)) {
      return readFile(file);
    }
    await mkdir(bundles, { recursive: true, mode: 0o700 });
    const started = Date.now();
    const bundle = await this.options.npm.install(specs, timeoutMs);
    await writeFile(`${file}.tmp`, bundle);
    await rename(`${file}.tmp`, file);
    this.options.logger.info(
      { specs, ms: Date.now() - started },
      'packages installed into the node cache',
    );
    return bundle;
  }
}
