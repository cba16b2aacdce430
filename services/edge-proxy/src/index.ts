export { startEdgeProxy } from './create-edge-proxy';
export type { EdgeProxyDeps, RunningEdgeProxy } from './create-edge-proxy';
export { parsePreviewHost } from './preview-host';
