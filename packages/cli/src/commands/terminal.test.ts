import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { fakeCli, fakeSandbox } from '../testing/fake-cli';

/** An unmasked server frame (payloads under 126 bytes): 0x1 text, 0x2 binary, 0x8 close. */
function frame(opcode: number, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0x80 | opcode, payload.length]), payload]);
}

/**
 * A terminal's endpoint that answers the upgrade and sends the shell's screen, its exit and
 * the close in one write: the bytes a busy client reads at once with the upgrade's answer.
 */
function terminalEndpoint(screen: string, exitCode: number): Promise<Server> {
  const server = createServer();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    const accept = createHash('sha1')
      .update(`${String(req.headers['sec-websocket-key'])}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
      .digest('base64');
    const close = Buffer.from([0x03, 0xe8]); // 1000
    socket.write(
      Buffer.concat([
        Buffer.from(
          'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
            `Sec-WebSocket-Accept: ${accept}\r\n\r\n`,
        ),
        frame(0x2, Buffer.from(screen)),
        frame(0x1, Buffer.from(JSON.stringify({ type: 'exit', exitCode }))),
        frame(0x8, close),
      ]),
    );
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    setTimeout(() => socket.destroy(), 200);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('sandbox terminal', () => {
  let server: Server | undefined;
  afterEach(() => new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined))));

  it("shows the bytes that came with the upgrade, and exits with the shell's code", async () => {
    server = await terminalEndpoint('sandbox@box:/workspace$ ', 3);
    const { port } = server.address() as AddressInfo;
    const create = jest.fn(() =>
      Promise.resolve({ id: 'term_1', url: `ws://127.0.0.1:${port}/connect?token=t` }),
    );
    const sandbox = fakeSandbox({ terminals: { create } });
    const cli = fakeCli({ connect: () => Promise.resolve(sandbox) });
    expect(await cli.run('terminal', 'ses_aaaaaaaaaaaaaaaaaaaaaaaa')).toBe(3);
    expect(cli.stdout()).toBe('sandbox@box:/workspace$ ');
    expect(create).toHaveBeenCalledWith({ shell: undefined, cols: 80, rows: 24 });
  });
});
