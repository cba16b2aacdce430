import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '@sandbox/logger';

const run = promisify(execFile);

export interface PackageRequest {
  name: string;
  spec: string;
}

/** An install that failed: the installer's message, for the run's stderr. */
export class InstallFailed extends Error {
  constructor(
    message: string,
    readonly timedOut: boolean,
  ) {
    super(message);
    this.name = 'InstallFailed';
  }
}

export interface PackageInstallerOptions {
  cacheDir: string;
  npmCommand: string;
  /** The operator's extra CA bundle for reaching the registry. */
  extraCaCertsPath: string | undefined;
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
 * code imports, the versions its package.json pins), and npm runs here, on the node, with the
 * node's network. A pin like `http://…` or `git+ssh://…` would make the node fetch it.
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

/** What npm needs of the agent's environment, and nothing else (no tokens, no keys). */
const NPM_ENVIRONMENT =
  /^(PATH|HOME|LANG|LC_ALL|TMPDIR|SSL_CERT_FILE|SSL_CERT_DIR|NODE_EXTRA_CA_CERTS|(HTTPS?|NO|ALL)_PROXY|(https?|no|all)_proxy|npm_config_\w+|NPM_CONFIG_\w+)$/;

export function npmEnvironment(
  env: NodeJS.ProcessEnv,
  extraCaCertsPath: string | undefined,
): NodeJS.ProcessEnv {
  const kept = Object.fromEntries(
    Object.entries(env).filter(([name]) => NPM_ENVIRONMENT.test(name)),
  );
  return extraCaCertsPath === undefined ? kept : { ...kept, NODE_EXTRA_CA_CERTS: extraCaCertsPath };
}

const EXACT_VERSION = /^\d+\.\d+\.\d+(?:-[\w.]+)?$/;
/** A bundle of ranges (e.g. `latest`) is rebuilt after this long, to pick up new releases. */
const RANGE_BUNDLE_TTL_MS = 6 * 60 * 60 * 1000;

/**
 * Installs packages for sandboxes, on the node, with a cache shared by every session: npm's
 * cache plus a ready bundle (tar.gz of node_modules) per set of packages, so that a second
 * session importing the same packages gets them in milliseconds. npm runs with
 * `--ignore-scripts`: no package code ever runs outside a sandbox, and only the agent writes
 * the cache, so one session cannot poison another's packages.
 */
export class PackageInstaller {
  private readonly inFlight = new Map<string, Promise<Buffer>>();

  constructor(private readonly options: PackageInstallerOptions) {}

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
    const work = await mkdtemp(join(this.options.cacheDir, 'work-'));
    const started = Date.now();
    try {
      await writeFile(join(work, 'package.json'), '{"private":true}\n');
      try {
        await run(
          this.options.npmCommand,
          [
            'install',
            '--prefix',
            work,
            '--ignore-scripts',
            '--no-audit',
            '--no-fund',
            '--no-update-notifier',
            '--no-package-lock',
            '--loglevel=error',
            '--cache',
            join(this.options.cacheDir, 'npm'),
            '--prefer-offline',
            // A dependency of a registry package may itself be a git URL: never run git here.
            '--git=/bin/false',
            ...specs,
          ],
          {
            timeout: timeoutMs,
            killSignal: 'SIGKILL',
            maxBuffer: 16 * 1024 * 1024,
            env: npmEnvironment(process.env, this.options.extraCaCertsPath),
          },
        );
      } catch (err) {
        const failure = err as { killed?: boolean; stderr?: string; message: string };
        if (failure.killed === true) {
          throw new InstallFailed(`Installing ${specs.join(' ')} timed out\n`, true);
        }
        const detail = (failure.stderr ?? '').trim() || failure.message;
        throw new InstallFailed(`Installing ${specs.join(' ')} failed:\n${detail}\n`, false);
      }
      await run('tar', ['-czf', `${file}.tmp`, '-C', work, 'node_modules']);
      await rename(`${file}.tmp`, file);
      this.options.logger.info(
        { specs, ms: Date.now() - started },
        'packages installed into the node cache',
      );
      return await readFile(file);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
}
