import { shell, useListenerNamespace } from './netns';

/**
 * Addresses a sandbox must never reach, each a real listener on this machine: a network
 * namespace behind a veth pair holds a private address and the metadata address, so that no
 * packet of a test ever leaves the machine.
 */
export const PRIVATE_ADDRESS = '10.199.77.2';
export const METADATA_ADDRESS = '169.254.169.254';
/** The port the forbidden listeners answer on ('reached'). */
export const FORBIDDEN_PORT = 18080;

/** A shell command that prints `reached` when host:port answers, else `blocked`. */
export const probe = (host: string, port: number): string =>
  `curl -s --max-time 3 http://${host}:${port}/ || echo blocked`;

/** Every forbidden listener's address: a sandbox's probe of each must print `blocked`. */
export const FORBIDDEN_ADDRESSES = [PRIVATE_ADDRESS, METADATA_ADDRESS] as const;

/** The probe of the forbidden listener at `address` (one of FORBIDDEN_ADDRESSES). */
export const probeForbidden = (address: string): string => probe(address, FORBIDDEN_PORT);

/**
 * Registers `beforeAll`/`afterAll` that make the forbidden listeners answer (checked from the
 * host, so that a `blocked` in a sandbox means it was refused) and take them down. Call it
 * before the stack's fixture, so that the stack starts once they answer.
 */
export function useForbiddenListeners(): void {
  useListenerNamespace({
    subnet: '10.199.77',
    addresses: [METADATA_ADDRESS],
    script: () =>
      `require('http').createServer((q, s) => s.end('reached')).listen(${FORBIDDEN_PORT}, '0.0.0.0')`,
    isUp: async (address) => (await shell(probe(address, FORBIDDEN_PORT))) === 'reached',
  });
}
