import { availableParallelism } from 'node:os';
import { AppError } from '@sandbox/errors';
import { loadAgentConfig, loadGatewayConfig, parseAgentNodes } from './index';

describe('loadGatewayConfig', () => {
  it('has working defaults for a bare environment', () => {
    const config = loadGatewayConfig({});
    expect(config.port).toBe(8080);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.redisUrl).toBeUndefined();
    expect(config.agentNodes).toEqual([{ id: 'local', address: '127.0.0.1:50051' }]);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('treats empty variables as unset', () => {
    expect(loadGatewayConfig({ DATABASE_URL: '', REDIS_URL: ' ' }).redisUrl).toBeUndefined();
  });

  it('lets no browser origin call the API unless CORS_ALLOWED_ORIGINS names it', () => {
    expect(loadGatewayConfig({}).corsOrigins).toEqual([]);
    expect(
      loadGatewayConfig({
        CORS_ALLOWED_ORIGINS: 'https://app.example.com, http://127.0.0.1:3000',
      }).corsOrigins,
    ).toEqual(['https://app.example.com', 'http://127.0.0.1:3000']);
    expect(loadGatewayConfig({ CORS_ALLOWED_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
    for (const bad of [
      'https://app.example.com/',
      'app.example.com',
      'ftp://x.example',
      'https://a.example/path',
    ]) {
      expect(() => loadGatewayConfig({ CORS_ALLOWED_ORIGINS: bad })).toThrow(
        /CORS_ALLOWED_ORIGINS/,
      );
    }
  });

  it('names the variable of a bad value', () => {
    expect(() => loadGatewayConfig({ GATEWAY_PORT: 'eighty' })).toThrow(/GATEWAY_PORT/);
    expect(() => loadGatewayConfig({ GATEWAY_PORT: '70000' })).toThrow(AppError);
  });

  it('serves no metrics unless METRICS_PORT is set; then on the service host by default', () => {
    expect(loadGatewayConfig({}).metrics).toEqual({
      port: undefined,
      host: '127.0.0.1',
      token: undefined,
    });
    expect(
      loadGatewayConfig({ GATEWAY_HOST: '0.0.0.0', METRICS_PORT: '9464', METRICS_TOKEN: 't' })
        .metrics,
    ).toEqual({ port: 9464, host: '0.0.0.0', token: 't' });
    expect(() => loadGatewayConfig({ METRICS_PORT: 'ninety' })).toThrow(/METRICS_PORT/);
    expect(() => loadGatewayConfig({ METRICS_PORT: '99999' })).toThrow(/METRICS_PORT/);
  });

  it('reads the heartbeat and drain intervals', () => {
    const config = loadGatewayConfig({ NODE_HEARTBEAT_MS: '500', NODE_DOWN_AFTER_MS: '3000' });
    expect(config).toMatchObject({ nodeHeartbeatMs: 500, nodeDownAfterMs: 3000 });
  });
});

describe('loadAgentConfig', () => {
  it('reads the sandbox settings', () => {
    const config = loadAgentConfig({
      NODE_ID: 'node-7',
      SANDBOX_EXTRA_CA_CERTS: '/etc/ca.pem',
      SANDBOX_PIDS_LIMIT: '128',
    });
    expect(config.nodeId).toBe('node-7');
    expect(config.extraCaCertsPath).toBe('/etc/ca.pem');
    expect(config.pidsLimit).toBe(128);
    expect(config.sandboxImage).toBe('sandbox-runtime:latest');
  });

  it('splits CPU by default, the runner with one CPU of its own; both can be set', () => {
    expect(loadAgentConfig({})).toMatchObject({ cpuSplit: true, runnerCpus: 1 });
    expect(loadAgentConfig({ SANDBOX_CPU_SPLIT: 'off', SANDBOX_RUNNER_CPUS: '0.5' })).toMatchObject(
      { cpuSplit: false, runnerCpus: 0.5 },
    );
    expect(() => loadAgentConfig({ SANDBOX_RUNNER_CPUS: '0' })).toThrow(/SANDBOX_RUNNER_CPUS/);
    expect(() => loadAgentConfig({ SANDBOX_CPU_SPLIT: 'yes' })).toThrow(/SANDBOX_CPU_SPLIT/);
  });

  it('rejects a node id that is not a DNS label', () => {
    expect(() => loadAgentConfig({ NODE_ID: 'Bad_Node' })).toThrow(/NODE_ID/);
  });

  it('keeps deep-sleeping workspaces in a local directory by default', () => {
    const config = loadAgentConfig({ BLOB_STORE_DIR: '/data/blobs' });
    expect(config.blobStore).toEqual({ kind: 'local' });
    expect(config.blobStoreDir).toBe('/data/blobs');
  });

  it('reads the S3 blob store settings', () => {
    const config = loadAgentConfig({
      BLOB_STORE: 's3',
      BLOB_STORE_S3_BUCKET: 'workspaces',
      BLOB_STORE_S3_ENDPOINT: 'http://minio.internal:9000',
      BLOB_STORE_S3_FORCE_PATH_STYLE: 'true',
    });
    expect(config.blobStore).toEqual({
      kind: 's3',
      bucket: 'workspaces',
      prefix: 'sandbox-workspaces/',
      region: 'us-east-1',
      endpoint: 'http://minio.internal:9000',
      forcePathStyle: true,
    });
    const aws = loadAgentConfig({
      BLOB_STORE: 's3',
      BLOB_STORE_S3_BUCKET: 'workspaces',
      BLOB_STORE_S3_PREFIX: '',
      BLOB_STORE_S3_REGION: 'eu-central-1',
    }).blobStore;
    expect(aws).toMatchObject({ prefix: '', region: 'eu-central-1', forcePathStyle: false });
    expect(aws).toHaveProperty('endpoint', undefined);
  });

  it('requires a bucket for the S3 blob store', () => {
    expect(() => loadAgentConfig({ BLOB_STORE: 's3' })).toThrow(
      /BLOB_STORE_S3_BUCKET: required when BLOB_STORE=s3/,
    );
    expect(() => loadAgentConfig({ BLOB_STORE: 's3', BLOB_STORE_S3_BUCKET: ' ' })).toThrow(
      AppError,
    );
  });

  it.each([
    { BLOB_STORE: 'gcs' },
    { BLOB_STORE: 's3', BLOB_STORE_S3_BUCKET: 'b', BLOB_STORE_S3_ENDPOINT: 'minio:9000' },
    { BLOB_STORE: 's3', BLOB_STORE_S3_BUCKET: 'b', BLOB_STORE_S3_FORCE_PATH_STYLE: 'yes' },
    { BLOB_STORE: 's3', BLOB_STORE_S3_BUCKET: 'b', BLOB_STORE_S3_PREFIX: 'no-slash' },
    { BLOB_STORE: 's3', BLOB_STORE_S3_BUCKET: 'b', BLOB_STORE_S3_PREFIX: '/abs/' },
  ])('rejects blob store settings %j, naming the variable', (env) => {
    const variable = Object.keys(env).at(-1) as string;
    expect(() => loadAgentConfig(env)).toThrow(new RegExp(`${variable}:`));
  });
});

describe('parseAgentNodes', () => {
  it('parses several nodes', () => {
    expect(parseAgentNodes('a=10.0.0.1:1, b=host-b:2')).toEqual([
      { id: 'a', address: '10.0.0.1:1' },
      { id: 'b', address: 'host-b:2' },
    ]);
  });

  it('reads "" as no node (every node joins through the registry)', () => {
    expect(parseAgentNodes('')).toEqual([]);
  });

  it.each(['a', 'a=b=c', 'a=nohostport', 'a=h:1,a=h:2', 'A=h:1'])('rejects %j', (value) => {
    expect(() => parseAgentNodes(value)).toThrow(AppError);
  });
});

describe("loadAgentConfig: the sessions' CPU weight (ADR 57)", () => {
  it('is one task per CPU by default; an operator sets it', () => {
    expect(loadAgentConfig({}).sessionCpuShares).toBe(1024 * availableParallelism());
    expect(loadAgentConfig({ SANDBOX_CPU_SHARES: '512' }).sessionCpuShares).toBe(512);
    expect(() => loadAgentConfig({ SANDBOX_CPU_SHARES: '1' })).toThrow(/SANDBOX_CPU_SHARES/);
  });
});
