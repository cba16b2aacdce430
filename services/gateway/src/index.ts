export { createApp } from './app';
export { startGateway } from './create-gateway';
export type { GatewayOptions, RunningGateway } from './create-gateway';
