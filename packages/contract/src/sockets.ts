import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Node's server forgets the connections it hands over (CONNECT tunnels, upgrades). Keeps them
 * instead, so that the server's `closeAllConnections` ends them too: stopping a server leaves
 * no tunnel or WebSocket open. Returns what to call with each socket handed over (one that
 * errors is destroyed).
 */
export function keepHandedOver(server: Server): (socket: Duplex) => void {
  const handedOver = new Set<Duplex>();
  const closeAllConnections = server.closeAllConnections.bind(server);
  server.closeAllConnections = () => {
    closeAllConnections();
    for (const socket of handedOver) socket.destroy();
  };
  return (socket) => {
    handedOver.add(socket);
    socket.on('close', () => handedOver.delete(socket));
    socket.on('error', () => socket.destroy());
  };
}

/** Either of two spliced sockets firing one of `events` destroys both: no half-open pair. */
export function closeTogether(
  a: Duplex,
  b: Duplex,
  events: readonly ('error' | 'end' | 'close')[] = ['error', 'end', 'close'],
): void {
  const closeBoth = () => {
    a.destroy();
    b.destroy();
  };
  for (const side of [a, b]) for (const event of events) side.on(event, closeBoth);
}
