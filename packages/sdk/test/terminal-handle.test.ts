import {
  InvalidRequestError,
  SessionNotFoundError,
  TerminalClosedError,
  WebSocketUnavailableError,
} from '../src/errors';
import {
  openTerminalSocket,
  webSocketClass,
  type WebSocketConstructor,
  type WebSocketLike,
} from '../src/terminal-handle';

type Listener = (event: unknown) => void;

/** A WebSocket that records what is sent and lets the test play the service's side. */
class FakeSocket implements WebSocketLike {
  static last: FakeSocket | undefined;
  binaryType = 'blob';
  readyState = 1;
  readonly sent: Array<string | Uint8Array> = [];
  private readonly listeners = new Map<string, Listener[]>();

  constructor(readonly url: string) {
    FakeSocket.last = this;
  }

  send(data: string | Uint8Array): void {
    this.sent.push(data);
  }

  close(code = 1005, reason = ''): void {
    this.emit('close', { code, reason });
  }

  addEventListener(type: string, listener: Listener): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  emit(type: string, event: unknown): void {
    if (type === 'close') this.readyState = 3;
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }

  text(message: unknown): void {
    this.emit('message', { data: JSON.stringify(message) });
  }

  bytes(text: string): void {
    this.emit('message', { data: new TextEncoder().encode(text).buffer });
  }
}

const kills: number[] = [];
const deps = {
  terminalId: 'term_1',
  sessionId: 'ses_1',
  kill: (pid: number) => Promise.resolve(kills.push(pid)),
};

/** A handle whose shell started (pid 42), on a fake socket. */
async function started() {
  const opening = openTerminalSocket('ws://x/connect?token=t', FakeSocket, deps);
  const socket = FakeSocket.last!;
  socket.text({ type: 'started', pid: 42 });
  return { handle: await opening, socket };
}

const decode = (chunks: Uint8Array[]) => chunks.map((c) => new TextDecoder().decode(c)).join('');

it('finds no WebSocket: a clear error; a given one wins', () => {
  const builtIn = (globalThis as { WebSocket?: unknown }).WebSocket;
  delete (globalThis as { WebSocket?: unknown }).WebSocket;
  try {
    expect(() => webSocketClass(undefined)).toThrow(WebSocketUnavailableError);
    expect(webSocketClass(FakeSocket as WebSocketConstructor)).toBe(FakeSocket);
  } finally {
    if (builtIn !== undefined) (globalThis as { WebSocket?: unknown }).WebSocket = builtIn;
  }
});

it('sends input as binary, resizes as a text control, and gives output as bytes', async () => {
  const { handle, socket } = await started();
  expect(socket.binaryType).toBe('arraybuffer');
  expect(handle.pid).toBe(42);
  socket.bytes('before ');
  const chunks: Uint8Array[] = [];
  handle.onData((bytes) => chunks.push(bytes));
  socket.bytes('after');
  socket.emit('message', { data: 'not json' }); // ignored, not thrown
  expect(decode(chunks)).toBe('before after');

  handle.sendInput('é\r');
  handle.resize(100, 30);
  expect(socket.sent[0]).toEqual(new TextEncoder().encode('é\r'));
  expect(socket.sent[1]).toBe('{"type":"resize","cols":100,"rows":30}');
  expect(() => handle.resize(1001, 30)).toThrow(InvalidRequestError);

  socket.text({ type: 'exit', exitCode: 3 });
  socket.close(1000, 'exited');
  await expect(handle.wait()).resolves.toEqual({ exitCode: 3 });
  expect(() => handle.sendInput('x')).toThrow(TerminalClosedError);
});

it("kills by pid only while the shell runs; the service's error comes as its class", async () => {
  const { handle, socket } = await started();
  kills.length = 0;
  await handle.kill();
  expect(kills).toEqual([42]);
  socket.text({ type: 'error', error: { code: 'session_not_found', message: 'gone' } });
  socket.close(1011, 'session_not_found');
  await expect(handle.wait()).rejects.toBeInstanceOf(SessionNotFoundError);
  await handle.kill();
  expect(kills).toEqual([42]);
});

it('rejects the open, and wait(), when the socket closes before the shell started', async () => {
  const opening = openTerminalSocket('ws://x', FakeSocket, deps);
  FakeSocket.last!.close(1006, '');
  await expect(opening).rejects.toBeInstanceOf(TerminalClosedError);
});

it('keeps at most the last megabyte of output for a first listener', async () => {
  const { handle, socket } = await started();
  for (let i = 0; i < 3; i += 1) socket.bytes(String(i).repeat(600_000));
  const chunks: Uint8Array[] = [];
  handle.onData((bytes) => chunks.push(bytes));
  expect(decode(chunks)).toBe('2'.repeat(600_000));
});
