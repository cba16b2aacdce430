export * from './ids';
export * from './sandbox-user';
export * from './run';
export * from './files';
export * from './tokens';
export * from './preview';
export { Periodic } from './periodic';
export { runService, type Stoppable } from './run-service';
export * from './metrics-server';
