export { AGENT_VERSION, startAgent } from './create-agent';
export type { AgentDeps, RunningAgent } from './create-agent';
export { DockerRuntime } from './runtime/docker-runtime';
export type { SandboxRuntime } from './runtime/sandbox-runtime';
