import { RUNNER_USER } from '@sandbox/contract';
import type { SandboxSpec } from '../sandbox-runtime';
import { containerSpec, sandboxLabels, type ContainerConfig } from './container-spec';

const config: ContainerConfig = {
  sandboxImage: 'sandbox-runtime:latest',
  sandboxNetwork: 'sandbox-net',
  sandboxRuntime: undefined,
  nodeId: 'node-7',
  labelPrefix: 'io.sandbox',
  extraCaCertsPath: undefined,
  pidsLimit: 256,
  nofileLimit: 1024,
  deepSleep: 'archive' as const,
  deepSleepDiskMinBytes: 0,
};

const spec: SandboxSpec = {
  sessionId: 'ses_abc',
  accountId: 'acc_1',
  limits: { memoryMb: 512, cpu: 1.5, diskMb: 1024, pids: 64 },
};

describe('containerSpec', () => {
  const options = containerSpec(spec, config, '/disks/ses_abc:/workspace:rw');
  const host = options.HostConfig!;

  it('names the container after the session and starts it as root in the sandbox group', () => {
    expect(options.name).toBe('sbx-ses_abc');
    expect(options.Image).toBe('sandbox-runtime:latest');
    expect(options.User).toBe(RUNNER_USER);
    expect(options.WorkingDir).toBe('/workspace');
    expect(options.Cmd).toEqual(['sleep', 'infinity']);
  });

  it('drops every capability but those that start user processes, with a read-only root', () => {
    expect(host.CapDrop).toEqual(['ALL']);
    expect(host.CapAdd).toEqual(['SETUID', 'SETGID', 'SETPCAP']);
    expect(host.Privileged).toBe(false);
    expect(host.SecurityOpt).toEqual(['no-new-privileges:true']);
    expect(host.ReadonlyRootfs).toBe(true);
    expect(host.IpcMode).toBe('private');
    expect(host.Init).toBe(true);
    expect(host.RestartPolicy).toEqual({ Name: 'no' });
  });

  it('gives writable tmpfs only for /tmp and the home directory', () => {
    expect(Object.keys(host.Tmpfs ?? {}).sort()).toEqual(['/home/sandbox', '/tmp']);
    expect(host.Tmpfs?.['/tmp']).toContain('nosuid');
    expect(host.Tmpfs?.['/home/sandbox']).toMatch(/uid=\d+,gid=\d+/);
  });

  it('applies the session limits: memory without swap, CPUs, processes, open files', () => {
    expect(host.Memory).toBe(512 * 1024 * 1024);
    expect(host.MemorySwap).toBe(512 * 1024 * 1024);
    expect(host.NanoCpus).toBe(1.5e9);
    expect(host.PidsLimit).toBe(64);
    expect(host.Ulimits).toEqual([{ Name: 'nofile', Soft: 1024, Hard: 1024 }]);
  });

  it("uses the node's process limit when the session has none", () => {
    const noPids = { ...spec, limits: { ...spec.limits, pids: 0 } };
    expect(containerSpec(noPids, config, 'w').HostConfig?.PidsLimit).toBe(256);
  });

  it('binds the workspace and joins the sandbox network', () => {
    expect(host.Binds).toEqual(['/disks/ses_abc:/workspace:rw']);
    expect(host.NetworkMode).toBe('sandbox-net');
  });

  it('labels the container with the session, account and node', () => {
    expect(options.Labels).toEqual({
      'io.sandbox.managed': 'true',
      'io.sandbox.session': 'ses_abc',
      'io.sandbox.account': 'acc_1',
      'io.sandbox.node': 'node-7',
    });
    expect(sandboxLabels(spec, config)).toEqual(options.Labels);
  });

  it('uses the configured container runtime only when there is one', () => {
    expect(host).not.toHaveProperty('Runtime');
    const gvisor = containerSpec(spec, { ...config, sandboxRuntime: 'runsc' }, 'w');
    expect(gvisor.HostConfig?.Runtime).toBe('runsc');
  });

  it("binds the operator's extra CA bundle read-only and points Node at it", () => {
    expect(options.Env).toEqual(['HOME=/home/sandbox']);
    const withCa = containerSpec(spec, { ...config, extraCaCertsPath: '/etc/ca.pem' }, 'w');
    expect(withCa.HostConfig?.Binds).toEqual([
      'w',
      '/etc/ca.pem:/etc/sandbox/extra-ca-certificates.pem:ro',
    ]);
    expect(withCa.Env).toContain('NODE_EXTRA_CA_CERTS=/etc/sandbox/extra-ca-certificates.pem');
  });
});
