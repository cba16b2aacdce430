import { createLogger } from '@sandbox/logger';
import { FakeContainers } from '../lifecycle/fake-containers';
import { prepareHost, type HostSetupConfig } from './host-setup';

const config: HostSetupConfig = {
  sandboxImage: 'sandbox-runtime:test',
  sandboxNetwork: 'sandbox-net',
  labelPrefix: 'io.sandbox',
  egressFirewall: false,
  egressAllow: [],
};
const logger = createLogger({ name: 'test', level: 'silent' });

/** A Docker host with the image, where the network is found with `options`. */
function host(options: Record<string, string>): FakeContainers {
  const containers = new FakeContainers([]);
  containers.inspectNetwork = (name) =>
    Promise.resolve({ id: `${name}-0123456789abcdef`, options });
  return containers;
}

describe('prepareHost', () => {
  it('asks to build the image when it is missing, as service_unavailable', async () => {
    const containers = host({ 'com.docker.network.bridge.enable_icc': 'false' });
    containers.inspectImage = () => Promise.reject(new Error('no such image'));
    await expect(prepareHost({ containers, config, logger })).rejects.toMatchObject({
      code: 'service_unavailable',
      retryAfter: 30,
      message: expect.stringContaining('scripts/build-sandbox-image'),
    });
  });

  it('creates the network without inter-container traffic, labelled as managed', async () => {
    const containers = host({ 'com.docker.network.bridge.enable_icc': 'false' });
    const created: unknown[] = [];
    containers.createNetwork = (options) => {
      created.push(options);
      return Promise.resolve(true);
    };
    await prepareHost({ containers, config, logger });
    expect(created).toEqual([
      expect.objectContaining({
        Name: 'sandbox-net',
        Driver: 'bridge',
        Labels: { 'io.sandbox.managed': 'true' },
        Options: { 'com.docker.network.bridge.enable_icc': 'false' },
      }),
    ]);
  });

  it('refuses a network that lets containers talk to each other', async () => {
    const containers = host({});
    await expect(prepareHost({ containers, config, logger })).rejects.toMatchObject({
      code: 'service_unavailable',
      message: expect.stringContaining('lets containers talk to each other'),
    });
  });
});
