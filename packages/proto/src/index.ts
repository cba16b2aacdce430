import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from './generated/agent';

/** The generated message types, each as given and as read (`__Output`), and the service's. */
export type * from './generated/agent/v1/Agent';
export type * from './generated/agent/v1/CreateSandboxRequest';
export type * from './generated/agent/v1/EgressPolicy';
export type * from './generated/agent/v1/DestroySandboxRequest';
export type * from './generated/agent/v1/DestroySandboxResponse';
export type * from './generated/agent/v1/ExecEvent';
export type * from './generated/agent/v1/RunSpec';
export type * from './generated/agent/v1/RunResult';
export type * from './generated/agent/v1/GetSandboxRequest';
export type * from './generated/agent/v1/NodeInfo';
export type * from './generated/agent/v1/ResourceLimits';
export type * from './generated/agent/v1/Sandbox';
export type * from './generated/agent/v1/FileChunk';
export type * from './generated/agent/v1/HibernateResponse';
export type * from './generated/agent/v1/FileEntry';
export type * from './generated/agent/v1/KillProcessesResponse';
export type * from './generated/agent/v1/ListFilesResponse';
export type * from './generated/agent/v1/ContextsRequest';
export type * from './generated/agent/v1/ContextsResponse';
export type * from './generated/agent/v1/SnapshotResponse';
export type * from './generated/agent/v1/SnapshotRequest';
export type * from './generated/agent/v1/ForkSandboxResponse';
export type * from './generated/agent/v1/CodeContext';
export type * from './generated/agent/v1/CellOutcome';
export type * from './generated/agent/v1/WriteFileResponse';
export type * from './generated/agent/v1/FileStat';
export type * from './generated/agent/v1/FileWatchEvent';
export type * from './generated/agent/v1/FileChange';
export type * from './generated/agent/v1/WatchFilesRequest';
export type * from './generated/agent/v1/RemoveFileResponse';
export type * from './generated/agent/v1/RenameFileResponse';
export type * from './generated/agent/v1/MakeDirectoryResponse';
export type * from './generated/agent/v1/TerminalInput';
export type * from './generated/agent/v1/TerminalOutput';
export type * from './generated/agent/v1/ProcessInfo';
export type * from './generated/agent/v1/OutputEvent';
export type * from './generated/agent/v1/LogPosition';
export type * from './generated/agent/v1/OutputChunk';
export type * from './generated/agent/v1/ListProcessesResponse';
export type * from './generated/agent/v1/ReadOutputRequest';
export type * from './generated/agent/v1/WriteStdinResponse';

/** proto/ at the repository root, the source of truth of the contract. */
export const PROTO_ROOT = join(__dirname, '..', '..', '..', 'proto');

/** The one set of loader options used by every client and server. */
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
};

let cached: ProtoGrpcType | undefined;
let definition: protoLoader.PackageDefinition | undefined;

/** The `agent.v1` package as proto-loader reads it (for server reflection). */
export function agentPackageDefinition(): protoLoader.PackageDefinition {
  definition ??= protoLoader.loadSync('agent/v1/agent.proto', LOADER_OPTIONS);
  return definition;
}

/** The loaded `agent.v1` package, typed by the generated types. */
export function loadAgentProto(): ProtoGrpcType {
  cached ??= grpc.loadPackageDefinition(agentPackageDefinition()) as unknown as ProtoGrpcType;
  return cached;
}
