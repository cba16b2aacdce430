import * as grpc from '@grpc/grpc-js';
import { AGENT_SERVER_OPTIONS } from './server-options';

/** The servers channelz keeps track of in this process. */
function trackedServers(): Promise<number> {
  const handlers = grpc.getChannelzHandlers();
  return new Promise((resolve, reject) => {
    handlers.GetServers(
      { request: { start_server_id: '0', max_results: '1000' } } as never,
      ((err: Error | null, answer?: { server: unknown[] }) =>
        err ? reject(err) : resolve(answer?.server.length ?? 0)) as never,
    );
  });
}

describe('the agent gRPC server options', () => {
  it('leave channelz off: a server made with them is not tracked', async () => {
    const before = await trackedServers();
    const agents = [new grpc.Server(AGENT_SERVER_OPTIONS)];
    expect(await trackedServers()).toBe(before);
    // The count does see a server made with grpc-js's defaults.
    const tracked = new grpc.Server();
    expect(await trackedServers()).toBe(before + 1);
    await Promise.all(
      [...agents, tracked].map((s) => new Promise<void>((done) => s.tryShutdown(() => done()))),
    );
  });
});
