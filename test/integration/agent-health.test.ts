import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { useStack } from '../support/use-stack';

/**
 * The agent's standard gRPC health service and server reflection (issue 12), through real
 * gRPC clients of those protocols, without the internal token: what grpc_health_probe,
 * Kubernetes gRPC probes and grpcurl use.
 */
const t = useStack();

type Callback<T> = (err: grpc.ServiceError | null, value?: T) => void;
interface HealthClient extends grpc.Client {
  check(request: { service: string }, callback: Callback<{ status: string }>): void;
}
interface ReflectionClient extends grpc.Client {
  serverReflectionInfo(): grpc.ClientDuplexStream<Record<string, unknown>, ReflectionAnswer>;
}
interface ReflectionAnswer {
  listServicesResponse?: { service: { name: string }[] };
  fileDescriptorResponse?: { fileDescriptorProto: Buffer[] };
  errorResponse?: { errorCode: number };
}

const options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };

function clientOf<T>(protoPath: string, path: string[]): T {
  let node = grpc.loadPackageDefinition(loadSync(protoPath, options)) as Record<string, unknown>;
  for (const name of path) node = node[name] as Record<string, unknown>;
  const Client = node as unknown as new (address: string, creds: grpc.ChannelCredentials) => T;
  return new Client(t.stack.agent.address, grpc.credentials.createInsecure());
}

function check(client: HealthClient, service: string): Promise<string> {
  return new Promise((resolve, reject) =>
    client.check({ service }, (err, answer) => (err ? reject(err) : resolve(answer?.status ?? ''))),
  );
}

function reflect(
  client: ReflectionClient,
  request: Record<string, unknown>,
): Promise<ReflectionAnswer> {
  return new Promise((resolve, reject) => {
    const call = client.serverReflectionInfo();
    call.on('data', (answer: ReflectionAnswer) => {
      resolve(answer);
      call.end();
    });
    call.on('error', reject);
    call.write(request);
  });
}

it('answers the standard health check, for the server and the Agent service', async () => {
  const health = clientOf<HealthClient>(healthProtoPath, ['grpc', 'health', 'v1', 'Health']);
  expect(await check(health, '')).toBe('SERVING');
  expect(await check(health, 'agent.v1.Agent')).toBe('SERVING');
  await expect(check(health, 'no.such.Service')).rejects.toMatchObject({
    code: grpc.status.NOT_FOUND,
  });
  health.close();
});

it('describes its services through server reflection', async () => {
  const protoDir = join(dirname(require.resolve('@grpc/reflection/package.json')), 'build/proto');
  const reflection = clientOf<ReflectionClient>(
    join(protoDir, 'grpc/reflection/v1/reflection.proto'),
    ['grpc', 'reflection', 'v1', 'ServerReflection'],
  );
  const listed = await reflect(reflection, { listServices: '' });
  expect(listed.listServicesResponse?.service.map((s) => s.name)).toEqual(
    expect.arrayContaining(['agent.v1.Agent', 'grpc.health.v1.Health']),
  );
  const file = await reflect(reflection, { fileContainingSymbol: 'agent.v1.Agent' });
  const described = Buffer.concat(file.fileDescriptorResponse?.fileDescriptorProto ?? []).toString(
    'latin1',
  );
  expect(described).toContain('agent.v1');
  expect(described).toContain('ReadOutput');
  reflection.close();
});
