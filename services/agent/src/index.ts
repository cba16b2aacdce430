export { AGENT_VERSION, startAgent } from './create-agent';
export type { AgentDeps, RunningAgent } from './create-agent';
export { DockerRuntime } from './runtime/docker-runtime';
export type { DockerRuntimeParts } from './runtime/docker-runtime-parts';
export { createDockerRuntime } from './runtime/create-docker-runtime';
export type { DockerRuntimeOptions } from './runtime/create-docker-runtime';
export type { ContainerClient, ContainerState } from './runtime/docker/container-client';
export { DockerodeContainerClient } from './runtime/docker/dockerode-container-client';
export { SerialNetworkLeaves } from './runtime/docker/serial-network-leaves';
export type { SandboxRuntime } from './runtime/sandbox-runtime';
export { removeNodeEgress } from './runtime/network/session-egress';
export { applyEgressFirewall, hostNameservers } from './runtime/docker/egress-firewall';
export { BlobStore, createBlobStore } from './runtime/storage/blob-store';
export type { ArchiveManifest } from './runtime/storage/blob-store';
export { LocalObjectStore } from './runtime/storage/local-object-store';
export type { ObjectStore, StoredObject } from './runtime/storage/object-store';
export { S3ObjectStore } from './runtime/storage/s3-object-store';
export type { S3Credentials, S3Settings } from './runtime/storage/s3-object-store';
export { LoopWorkspaces } from './runtime/storage/workspaces';
export { WORKSPACE_MOUNT_OPTIONS, workspaceMkfsArgs } from './runtime/storage/workspace-disk';
export { SandboxHostIds } from './runtime/docker/host-ids';
export {
  FAVOR_DYNMODS_MOUNT,
  FAVOR_DYNMODS_NAME,
  favorsDynmods,
} from './runtime/docker/cgroup-moves';
export { freezerOfProcess, isFrozen } from './runtime/docker/cgroup-freezer';
