import { createLogger } from '@sandbox/logger';
import { disableRefusedEndpoints } from './refused-endpoints';
import type { EndpointTarget } from './webhook-store';

const logger = createLogger({ name: 'test', level: 'silent' });

/** A store of `endpoints`, recording what is disabled and why. */
function storeOf(endpoints: EndpointTarget[]) {
  const disabled = new Map<string, string>();
  return {
    disabled,
    listEnabled: () => Promise.resolve(endpoints.filter((e) => !disabled.has(e.id))),
    disable: (id: string, reason: string) => {
      const now = !disabled.has(id);
      if (now) disabled.set(id, reason);
      return Promise.resolve(now);
    },
  };
}

const endpoint = (id: string, url: string): EndpointTarget => ({ id, url, accountId: 'acc_1' });

describe('endpoints registered before their URLs were refused', () => {
  it('are disabled with the reason registration gives now; the others are left', async () => {
    const store = storeOf([
      endpoint('wh_own', 'http://192.0.2.2:37767/'),
      endpoint('wh_name', 'https://vm/hook'),
      endpoint('wh_public', 'https://hooks.example.com/x'),
      endpoint('wh_unresolved', 'https://gone.example.com/x'),
    ]);
    const names: Record<string, string[]> = {
      vm: ['127.0.0.1'],
      'hooks.example.com': ['93.184.216.34'],
    };
    const disabled = await disableRefusedEndpoints({
      store,
      logger,
      resolve: (name) => Promise.resolve(names[name] ?? []),
    });
    expect(disabled).toBe(2);
    expect(Object.fromEntries(store.disabled)).toEqual({
      wh_own: expect.stringMatching(/^url refused: 192\.0\.2\.2 is not a public address \(/),
      wh_name: 'url refused: vm resolves to 127.0.0.1, which is not a public address (loopback)',
    });
    // A second replica starting finds nothing more to do.
    expect(
      await disableRefusedEndpoints({ store, logger, resolve: () => Promise.resolve([]) }),
    ).toBe(0);
  });

  it('starts on no endpoint once the gateway stops', async () => {
    const store = storeOf([endpoint('wh_own', 'http://127.0.0.1:9/')]);
    const signal = AbortSignal.abort();
    expect(await disableRefusedEndpoints({ store, logger, signal })).toBe(0);
    expect(store.disabled.size).toBe(0);
  });

  it('logs a store that fails, and throws nothing', async () => {
    const store = {
      listEnabled: () => Promise.reject(new Error('database gone')),
      disable: () => Promise.resolve(true),
    };
    expect(await disableRefusedEndpoints({ store, logger })).toBe(0);
  });
});
