import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { INTERNAL_TOKEN_METADATA_KEY } from '@sandbox/contract';
import { useAgent } from '../support/use-agent';

const t = useAgent('grpc');
const sessionId = `ses_${randomBytes(12).toString('hex')}`;

function metadata(value?: string): grpc.Metadata {
  const md = new grpc.Metadata();
  if (value !== undefined) md.set(INTERNAL_TOKEN_METADATA_KEY, `Bearer ${value}`);
  return md;
}

function nodeInfo(md: grpc.Metadata): Promise<{ nodeId: string; previewAddress: string }> {
  return new Promise((resolve, reject) => {
    t.client.getNodeInfo({}, md, (err, res) =>
      err || !res ? reject(err ?? new Error('empty')) : resolve(res),
    );
  });
}

describe('agent gRPC service', () => {
  it('refuses calls without the internal token', async () => {
    await expect(nodeInfo(metadata())).rejects.toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
    });
    await expect(nodeInfo(metadata('wrong'))).rejects.toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
    });
  });

  it('answers with the token, and finds its sandboxes again after a restart', async () => {
    expect(await nodeInfo(metadata(t.token))).toMatchObject({
      nodeId: t.nodeId,
      previewAddress: t.agent.previewAddress,
    });
    const create = () =>
      new Promise<{ containerId: string; status: string }>((resolve, reject) => {
        t.client.createSandbox(
          {
            sessionId,
            accountId: 'acc_x',
            limits: { memoryMb: 256, cpu: 0.5, diskMb: 1024, pids: 64 },
          },
          metadata(t.token),
          (err, res) => (err || !res ? reject(err ?? new Error('empty')) : resolve(res)),
        );
      });
    const first = await create();
    expect(first.status).toBe('running');

    await t.restart();
    const again = await create();
    expect(again.containerId).toBe(first.containerId);
  });
});
