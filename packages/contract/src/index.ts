export * from './ids';
export * from './sandbox-user';
export * from './run';
export * from './tokens';
export * from './preview';
export { endToEndHeaders, forwardResponse, guardUpgrade } from './preview-http';
export { Periodic } from './periodic';
export { runService, type Stoppable } from './run-service';
export { createProxyServer, type ProxyRoutes } from './proxy-server';
