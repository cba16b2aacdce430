import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from './generated/agent';

export type { AgentClient, AgentHandlers } from './generated/agent/v1/Agent';
export type { CreateSandboxRequest__Output } from './generated/agent/v1/CreateSandboxRequest';
export type { EgressPolicy, EgressPolicy__Output } from './generated/agent/v1/EgressPolicy';
export type { DestroySandboxRequest__Output } from './generated/agent/v1/DestroySandboxRequest';
export type {
  DestroySandboxResponse,
  DestroySandboxResponse__Output,
} from './generated/agent/v1/DestroySandboxResponse';
export type { ExecEvent, ExecEvent__Output } from './generated/agent/v1/ExecEvent';
export type { ExecRequest, ExecRequest__Output } from './generated/agent/v1/ExecRequest';
export type { RunResult, RunResult__Output } from './generated/agent/v1/RunResult';
export type { GetSandboxRequest__Output } from './generated/agent/v1/GetSandboxRequest';
export type { NodeInfo, NodeInfo__Output } from './generated/agent/v1/NodeInfo';
export type { ResourceLimits, ResourceLimits__Output } from './generated/agent/v1/ResourceLimits';
export type { Sandbox, Sandbox__Output } from './generated/agent/v1/Sandbox';
export type { FileChunk, FileChunk__Output } from './generated/agent/v1/FileChunk';
export type { HibernateResponse__Output } from './generated/agent/v1/HibernateResponse';
export type { FileEntry__Output } from './generated/agent/v1/FileEntry';
export type { KillProcessesResponse__Output } from './generated/agent/v1/KillProcessesResponse';
export type { ListFilesResponse__Output } from './generated/agent/v1/ListFilesResponse';
export type { ContextsRequest__Output } from './generated/agent/v1/ContextsRequest';
export type { ContextsRequest } from './generated/agent/v1/ContextsRequest';
export type { ContextsResponse__Output } from './generated/agent/v1/ContextsResponse';
export type { SnapshotResponse__Output } from './generated/agent/v1/SnapshotResponse';
export type { SnapshotRequest__Output } from './generated/agent/v1/SnapshotRequest';
export type { ForkSandboxResponse__Output } from './generated/agent/v1/ForkSandboxResponse';
export type { CodeContext__Output } from './generated/agent/v1/CodeContext';
export type { CellOutcome__Output } from './generated/agent/v1/CellOutcome';
export type { WriteFileResponse__Output } from './generated/agent/v1/WriteFileResponse';
export type { FileStat, FileStat__Output } from './generated/agent/v1/FileStat';
export type { RemoveFileResponse__Output } from './generated/agent/v1/RemoveFileResponse';
export type { RenameFileResponse__Output } from './generated/agent/v1/RenameFileResponse';
export type { MakeDirectoryResponse__Output } from './generated/agent/v1/MakeDirectoryResponse';
export type { TerminalInput, TerminalInput__Output } from './generated/agent/v1/TerminalInput';
export type { TerminalOutput, TerminalOutput__Output } from './generated/agent/v1/TerminalOutput';
export type { ProcessInfo, ProcessInfo__Output } from './generated/agent/v1/ProcessInfo';
export type { OutputEvent, OutputEvent__Output } from './generated/agent/v1/OutputEvent';
export type { LogPosition, LogPosition__Output } from './generated/agent/v1/LogPosition';
export type { OutputChunk__Output } from './generated/agent/v1/OutputChunk';
export type { ListProcessesResponse__Output } from './generated/agent/v1/ListProcessesResponse';
export type { ReadOutputRequest__Output } from './generated/agent/v1/ReadOutputRequest';
export type { WriteStdinResponse__Output } from './generated/agent/v1/WriteStdinResponse';

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
