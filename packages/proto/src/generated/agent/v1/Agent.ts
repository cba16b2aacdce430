// Original file: proto/agent/v1/agent.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ContextsRequest as _agent_v1_ContextsRequest, ContextsRequest__Output as _agent_v1_ContextsRequest__Output } from '../../agent/v1/ContextsRequest';
import type { ContextsResponse as _agent_v1_ContextsResponse, ContextsResponse__Output as _agent_v1_ContextsResponse__Output } from '../../agent/v1/ContextsResponse';
import type { CreateSandboxRequest as _agent_v1_CreateSandboxRequest, CreateSandboxRequest__Output as _agent_v1_CreateSandboxRequest__Output } from '../../agent/v1/CreateSandboxRequest';
import type { DeleteSnapshotRequest as _agent_v1_DeleteSnapshotRequest, DeleteSnapshotRequest__Output as _agent_v1_DeleteSnapshotRequest__Output } from '../../agent/v1/DeleteSnapshotRequest';
import type { DeleteSnapshotResponse as _agent_v1_DeleteSnapshotResponse, DeleteSnapshotResponse__Output as _agent_v1_DeleteSnapshotResponse__Output } from '../../agent/v1/DeleteSnapshotResponse';
import type { DestroySandboxRequest as _agent_v1_DestroySandboxRequest, DestroySandboxRequest__Output as _agent_v1_DestroySandboxRequest__Output } from '../../agent/v1/DestroySandboxRequest';
import type { DestroySandboxResponse as _agent_v1_DestroySandboxResponse, DestroySandboxResponse__Output as _agent_v1_DestroySandboxResponse__Output } from '../../agent/v1/DestroySandboxResponse';
import type { ExecEvent as _agent_v1_ExecEvent, ExecEvent__Output as _agent_v1_ExecEvent__Output } from '../../agent/v1/ExecEvent';
import type { FileChunk as _agent_v1_FileChunk, FileChunk__Output as _agent_v1_FileChunk__Output } from '../../agent/v1/FileChunk';
import type { FileStat as _agent_v1_FileStat, FileStat__Output as _agent_v1_FileStat__Output } from '../../agent/v1/FileStat';
import type { ForkSandboxRequest as _agent_v1_ForkSandboxRequest, ForkSandboxRequest__Output as _agent_v1_ForkSandboxRequest__Output } from '../../agent/v1/ForkSandboxRequest';
import type { ForkSandboxResponse as _agent_v1_ForkSandboxResponse, ForkSandboxResponse__Output as _agent_v1_ForkSandboxResponse__Output } from '../../agent/v1/ForkSandboxResponse';
import type { GetNodeInfoRequest as _agent_v1_GetNodeInfoRequest, GetNodeInfoRequest__Output as _agent_v1_GetNodeInfoRequest__Output } from '../../agent/v1/GetNodeInfoRequest';
import type { GetSandboxRequest as _agent_v1_GetSandboxRequest, GetSandboxRequest__Output as _agent_v1_GetSandboxRequest__Output } from '../../agent/v1/GetSandboxRequest';
import type { HibernateResponse as _agent_v1_HibernateResponse, HibernateResponse__Output as _agent_v1_HibernateResponse__Output } from '../../agent/v1/HibernateResponse';
import type { KillProcessesRequest as _agent_v1_KillProcessesRequest, KillProcessesRequest__Output as _agent_v1_KillProcessesRequest__Output } from '../../agent/v1/KillProcessesRequest';
import type { KillProcessesResponse as _agent_v1_KillProcessesResponse, KillProcessesResponse__Output as _agent_v1_KillProcessesResponse__Output } from '../../agent/v1/KillProcessesResponse';
import type { ListFilesRequest as _agent_v1_ListFilesRequest, ListFilesRequest__Output as _agent_v1_ListFilesRequest__Output } from '../../agent/v1/ListFilesRequest';
import type { ListFilesResponse as _agent_v1_ListFilesResponse, ListFilesResponse__Output as _agent_v1_ListFilesResponse__Output } from '../../agent/v1/ListFilesResponse';
import type { ListProcessesRequest as _agent_v1_ListProcessesRequest, ListProcessesRequest__Output as _agent_v1_ListProcessesRequest__Output } from '../../agent/v1/ListProcessesRequest';
import type { ListProcessesResponse as _agent_v1_ListProcessesResponse, ListProcessesResponse__Output as _agent_v1_ListProcessesResponse__Output } from '../../agent/v1/ListProcessesResponse';
import type { MakeDirectoryRequest as _agent_v1_MakeDirectoryRequest, MakeDirectoryRequest__Output as _agent_v1_MakeDirectoryRequest__Output } from '../../agent/v1/MakeDirectoryRequest';
import type { MakeDirectoryResponse as _agent_v1_MakeDirectoryResponse, MakeDirectoryResponse__Output as _agent_v1_MakeDirectoryResponse__Output } from '../../agent/v1/MakeDirectoryResponse';
import type { NodeInfo as _agent_v1_NodeInfo, NodeInfo__Output as _agent_v1_NodeInfo__Output } from '../../agent/v1/NodeInfo';
import type { OutputEvent as _agent_v1_OutputEvent, OutputEvent__Output as _agent_v1_OutputEvent__Output } from '../../agent/v1/OutputEvent';
import type { ReadFileRequest as _agent_v1_ReadFileRequest, ReadFileRequest__Output as _agent_v1_ReadFileRequest__Output } from '../../agent/v1/ReadFileRequest';
import type { ReadOutputRequest as _agent_v1_ReadOutputRequest, ReadOutputRequest__Output as _agent_v1_ReadOutputRequest__Output } from '../../agent/v1/ReadOutputRequest';
import type { RemoveFileRequest as _agent_v1_RemoveFileRequest, RemoveFileRequest__Output as _agent_v1_RemoveFileRequest__Output } from '../../agent/v1/RemoveFileRequest';
import type { RemoveFileResponse as _agent_v1_RemoveFileResponse, RemoveFileResponse__Output as _agent_v1_RemoveFileResponse__Output } from '../../agent/v1/RemoveFileResponse';
import type { RenameFileRequest as _agent_v1_RenameFileRequest, RenameFileRequest__Output as _agent_v1_RenameFileRequest__Output } from '../../agent/v1/RenameFileRequest';
import type { RenameFileResponse as _agent_v1_RenameFileResponse, RenameFileResponse__Output as _agent_v1_RenameFileResponse__Output } from '../../agent/v1/RenameFileResponse';
import type { RunSpec as _agent_v1_RunSpec, RunSpec__Output as _agent_v1_RunSpec__Output } from '../../agent/v1/RunSpec';
import type { Sandbox as _agent_v1_Sandbox, Sandbox__Output as _agent_v1_Sandbox__Output } from '../../agent/v1/Sandbox';
import type { SetEgressRequest as _agent_v1_SetEgressRequest, SetEgressRequest__Output as _agent_v1_SetEgressRequest__Output } from '../../agent/v1/SetEgressRequest';
import type { SnapshotRequest as _agent_v1_SnapshotRequest, SnapshotRequest__Output as _agent_v1_SnapshotRequest__Output } from '../../agent/v1/SnapshotRequest';
import type { SnapshotResponse as _agent_v1_SnapshotResponse, SnapshotResponse__Output as _agent_v1_SnapshotResponse__Output } from '../../agent/v1/SnapshotResponse';
import type { StatFileRequest as _agent_v1_StatFileRequest, StatFileRequest__Output as _agent_v1_StatFileRequest__Output } from '../../agent/v1/StatFileRequest';
import type { TerminalInput as _agent_v1_TerminalInput, TerminalInput__Output as _agent_v1_TerminalInput__Output } from '../../agent/v1/TerminalInput';
import type { TerminalOutput as _agent_v1_TerminalOutput, TerminalOutput__Output as _agent_v1_TerminalOutput__Output } from '../../agent/v1/TerminalOutput';
import type { TransitionRequest as _agent_v1_TransitionRequest, TransitionRequest__Output as _agent_v1_TransitionRequest__Output } from '../../agent/v1/TransitionRequest';
import type { WriteFileRequest as _agent_v1_WriteFileRequest, WriteFileRequest__Output as _agent_v1_WriteFileRequest__Output } from '../../agent/v1/WriteFileRequest';
import type { WriteFileResponse as _agent_v1_WriteFileResponse, WriteFileResponse__Output as _agent_v1_WriteFileResponse__Output } from '../../agent/v1/WriteFileResponse';
import type { WriteStdinRequest as _agent_v1_WriteStdinRequest, WriteStdinRequest__Output as _agent_v1_WriteStdinRequest__Output } from '../../agent/v1/WriteStdinRequest';
import type { WriteStdinResponse as _agent_v1_WriteStdinResponse, WriteStdinResponse__Output as _agent_v1_WriteStdinResponse__Output } from '../../agent/v1/WriteStdinResponse';

export interface AgentClient extends grpc.Client {
  CreateSandbox(argument: _agent_v1_CreateSandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  CreateSandbox(argument: _agent_v1_CreateSandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  CreateSandbox(argument: _agent_v1_CreateSandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  CreateSandbox(argument: _agent_v1_CreateSandboxRequest, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  createSandbox(argument: _agent_v1_CreateSandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  createSandbox(argument: _agent_v1_CreateSandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  createSandbox(argument: _agent_v1_CreateSandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  createSandbox(argument: _agent_v1_CreateSandboxRequest, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  
  DeleteSnapshot(argument: _agent_v1_DeleteSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  DeleteSnapshot(argument: _agent_v1_DeleteSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  DeleteSnapshot(argument: _agent_v1_DeleteSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  DeleteSnapshot(argument: _agent_v1_DeleteSnapshotRequest, callback: grpc.requestCallback<_agent_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteSnapshot(argument: _agent_v1_DeleteSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteSnapshot(argument: _agent_v1_DeleteSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteSnapshot(argument: _agent_v1_DeleteSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteSnapshot(argument: _agent_v1_DeleteSnapshotRequest, callback: grpc.requestCallback<_agent_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  
  DestroySandbox(argument: _agent_v1_DestroySandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  DestroySandbox(argument: _agent_v1_DestroySandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  DestroySandbox(argument: _agent_v1_DestroySandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  DestroySandbox(argument: _agent_v1_DestroySandboxRequest, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  destroySandbox(argument: _agent_v1_DestroySandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  destroySandbox(argument: _agent_v1_DestroySandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  destroySandbox(argument: _agent_v1_DestroySandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  destroySandbox(argument: _agent_v1_DestroySandboxRequest, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  
  Exec(argument: _agent_v1_RunSpec, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_ExecEvent__Output>;
  Exec(argument: _agent_v1_RunSpec, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_ExecEvent__Output>;
  exec(argument: _agent_v1_RunSpec, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_ExecEvent__Output>;
  exec(argument: _agent_v1_RunSpec, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_ExecEvent__Output>;
  
  ForkSandbox(argument: _agent_v1_ForkSandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ForkSandboxResponse__Output>): grpc.ClientUnaryCall;
  ForkSandbox(argument: _agent_v1_ForkSandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_ForkSandboxResponse__Output>): grpc.ClientUnaryCall;
  ForkSandbox(argument: _agent_v1_ForkSandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ForkSandboxResponse__Output>): grpc.ClientUnaryCall;
  ForkSandbox(argument: _agent_v1_ForkSandboxRequest, callback: grpc.requestCallback<_agent_v1_ForkSandboxResponse__Output>): grpc.ClientUnaryCall;
  forkSandbox(argument: _agent_v1_ForkSandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ForkSandboxResponse__Output>): grpc.ClientUnaryCall;
  forkSandbox(argument: _agent_v1_ForkSandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_ForkSandboxResponse__Output>): grpc.ClientUnaryCall;
  forkSandbox(argument: _agent_v1_ForkSandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ForkSandboxResponse__Output>): grpc.ClientUnaryCall;
  forkSandbox(argument: _agent_v1_ForkSandboxRequest, callback: grpc.requestCallback<_agent_v1_ForkSandboxResponse__Output>): grpc.ClientUnaryCall;
  
  GetNodeInfo(argument: _agent_v1_GetNodeInfoRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_NodeInfo__Output>): grpc.ClientUnaryCall;
  GetNodeInfo(argument: _agent_v1_GetNodeInfoRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_NodeInfo__Output>): grpc.ClientUnaryCall;
  GetNodeInfo(argument: _agent_v1_GetNodeInfoRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_NodeInfo__Output>): grpc.ClientUnaryCall;
  GetNodeInfo(argument: _agent_v1_GetNodeInfoRequest, callback: grpc.requestCallback<_agent_v1_NodeInfo__Output>): grpc.ClientUnaryCall;
  getNodeInfo(argument: _agent_v1_GetNodeInfoRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_NodeInfo__Output>): grpc.ClientUnaryCall;
  getNodeInfo(argument: _agent_v1_GetNodeInfoRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_NodeInfo__Output>): grpc.ClientUnaryCall;
  getNodeInfo(argument: _agent_v1_GetNodeInfoRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_NodeInfo__Output>): grpc.ClientUnaryCall;
  getNodeInfo(argument: _agent_v1_GetNodeInfoRequest, callback: grpc.requestCallback<_agent_v1_NodeInfo__Output>): grpc.ClientUnaryCall;
  
  GetSandbox(argument: _agent_v1_GetSandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  GetSandbox(argument: _agent_v1_GetSandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  GetSandbox(argument: _agent_v1_GetSandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  GetSandbox(argument: _agent_v1_GetSandboxRequest, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  getSandbox(argument: _agent_v1_GetSandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  getSandbox(argument: _agent_v1_GetSandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  getSandbox(argument: _agent_v1_GetSandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  getSandbox(argument: _agent_v1_GetSandboxRequest, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  
  HibernateSandbox(argument: _agent_v1_TransitionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_HibernateResponse__Output>): grpc.ClientUnaryCall;
  HibernateSandbox(argument: _agent_v1_TransitionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_HibernateResponse__Output>): grpc.ClientUnaryCall;
  HibernateSandbox(argument: _agent_v1_TransitionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_HibernateResponse__Output>): grpc.ClientUnaryCall;
  HibernateSandbox(argument: _agent_v1_TransitionRequest, callback: grpc.requestCallback<_agent_v1_HibernateResponse__Output>): grpc.ClientUnaryCall;
  hibernateSandbox(argument: _agent_v1_TransitionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_HibernateResponse__Output>): grpc.ClientUnaryCall;
  hibernateSandbox(argument: _agent_v1_TransitionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_HibernateResponse__Output>): grpc.ClientUnaryCall;
  hibernateSandbox(argument: _agent_v1_TransitionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_HibernateResponse__Output>): grpc.ClientUnaryCall;
  hibernateSandbox(argument: _agent_v1_TransitionRequest, callback: grpc.requestCallback<_agent_v1_HibernateResponse__Output>): grpc.ClientUnaryCall;
  
  KillProcesses(argument: _agent_v1_KillProcessesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_KillProcessesResponse__Output>): grpc.ClientUnaryCall;
  KillProcesses(argument: _agent_v1_KillProcessesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_KillProcessesResponse__Output>): grpc.ClientUnaryCall;
  KillProcesses(argument: _agent_v1_KillProcessesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_KillProcessesResponse__Output>): grpc.ClientUnaryCall;
  KillProcesses(argument: _agent_v1_KillProcessesRequest, callback: grpc.requestCallback<_agent_v1_KillProcessesResponse__Output>): grpc.ClientUnaryCall;
  killProcesses(argument: _agent_v1_KillProcessesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_KillProcessesResponse__Output>): grpc.ClientUnaryCall;
  killProcesses(argument: _agent_v1_KillProcessesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_KillProcessesResponse__Output>): grpc.ClientUnaryCall;
  killProcesses(argument: _agent_v1_KillProcessesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_KillProcessesResponse__Output>): grpc.ClientUnaryCall;
  killProcesses(argument: _agent_v1_KillProcessesRequest, callback: grpc.requestCallback<_agent_v1_KillProcessesResponse__Output>): grpc.ClientUnaryCall;
  
  ListFiles(argument: _agent_v1_ListFilesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ListFilesResponse__Output>): grpc.ClientUnaryCall;
  ListFiles(argument: _agent_v1_ListFilesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_ListFilesResponse__Output>): grpc.ClientUnaryCall;
  ListFiles(argument: _agent_v1_ListFilesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ListFilesResponse__Output>): grpc.ClientUnaryCall;
  ListFiles(argument: _agent_v1_ListFilesRequest, callback: grpc.requestCallback<_agent_v1_ListFilesResponse__Output>): grpc.ClientUnaryCall;
  listFiles(argument: _agent_v1_ListFilesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ListFilesResponse__Output>): grpc.ClientUnaryCall;
  listFiles(argument: _agent_v1_ListFilesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_ListFilesResponse__Output>): grpc.ClientUnaryCall;
  listFiles(argument: _agent_v1_ListFilesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ListFilesResponse__Output>): grpc.ClientUnaryCall;
  listFiles(argument: _agent_v1_ListFilesRequest, callback: grpc.requestCallback<_agent_v1_ListFilesResponse__Output>): grpc.ClientUnaryCall;
  
  ListProcesses(argument: _agent_v1_ListProcessesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ListProcessesResponse__Output>): grpc.ClientUnaryCall;
  ListProcesses(argument: _agent_v1_ListProcessesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_ListProcessesResponse__Output>): grpc.ClientUnaryCall;
  ListProcesses(argument: _agent_v1_ListProcessesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ListProcessesResponse__Output>): grpc.ClientUnaryCall;
  ListProcesses(argument: _agent_v1_ListProcessesRequest, callback: grpc.requestCallback<_agent_v1_ListProcessesResponse__Output>): grpc.ClientUnaryCall;
  listProcesses(argument: _agent_v1_ListProcessesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ListProcessesResponse__Output>): grpc.ClientUnaryCall;
  listProcesses(argument: _agent_v1_ListProcessesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_ListProcessesResponse__Output>): grpc.ClientUnaryCall;
  listProcesses(argument: _agent_v1_ListProcessesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ListProcessesResponse__Output>): grpc.ClientUnaryCall;
  listProcesses(argument: _agent_v1_ListProcessesRequest, callback: grpc.requestCallback<_agent_v1_ListProcessesResponse__Output>): grpc.ClientUnaryCall;
  
  MakeDirectory(argument: _agent_v1_MakeDirectoryRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_MakeDirectoryResponse__Output>): grpc.ClientUnaryCall;
  MakeDirectory(argument: _agent_v1_MakeDirectoryRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_MakeDirectoryResponse__Output>): grpc.ClientUnaryCall;
  MakeDirectory(argument: _agent_v1_MakeDirectoryRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_MakeDirectoryResponse__Output>): grpc.ClientUnaryCall;
  MakeDirectory(argument: _agent_v1_MakeDirectoryRequest, callback: grpc.requestCallback<_agent_v1_MakeDirectoryResponse__Output>): grpc.ClientUnaryCall;
  makeDirectory(argument: _agent_v1_MakeDirectoryRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_MakeDirectoryResponse__Output>): grpc.ClientUnaryCall;
  makeDirectory(argument: _agent_v1_MakeDirectoryRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_MakeDirectoryResponse__Output>): grpc.ClientUnaryCall;
  makeDirectory(argument: _agent_v1_MakeDirectoryRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_MakeDirectoryResponse__Output>): grpc.ClientUnaryCall;
  makeDirectory(argument: _agent_v1_MakeDirectoryRequest, callback: grpc.requestCallback<_agent_v1_MakeDirectoryResponse__Output>): grpc.ClientUnaryCall;
  
  ManageContexts(argument: _agent_v1_ContextsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ContextsResponse__Output>): grpc.ClientUnaryCall;
  ManageContexts(argument: _agent_v1_ContextsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_ContextsResponse__Output>): grpc.ClientUnaryCall;
  ManageContexts(argument: _agent_v1_ContextsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ContextsResponse__Output>): grpc.ClientUnaryCall;
  ManageContexts(argument: _agent_v1_ContextsRequest, callback: grpc.requestCallback<_agent_v1_ContextsResponse__Output>): grpc.ClientUnaryCall;
  manageContexts(argument: _agent_v1_ContextsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ContextsResponse__Output>): grpc.ClientUnaryCall;
  manageContexts(argument: _agent_v1_ContextsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_ContextsResponse__Output>): grpc.ClientUnaryCall;
  manageContexts(argument: _agent_v1_ContextsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_ContextsResponse__Output>): grpc.ClientUnaryCall;
  manageContexts(argument: _agent_v1_ContextsRequest, callback: grpc.requestCallback<_agent_v1_ContextsResponse__Output>): grpc.ClientUnaryCall;
  
  OpenTerminal(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_agent_v1_TerminalInput, _agent_v1_TerminalOutput__Output>;
  OpenTerminal(options?: grpc.CallOptions): grpc.ClientDuplexStream<_agent_v1_TerminalInput, _agent_v1_TerminalOutput__Output>;
  openTerminal(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_agent_v1_TerminalInput, _agent_v1_TerminalOutput__Output>;
  openTerminal(options?: grpc.CallOptions): grpc.ClientDuplexStream<_agent_v1_TerminalInput, _agent_v1_TerminalOutput__Output>;
  
  PauseSandbox(argument: _agent_v1_TransitionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  PauseSandbox(argument: _agent_v1_TransitionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  PauseSandbox(argument: _agent_v1_TransitionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  PauseSandbox(argument: _agent_v1_TransitionRequest, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  pauseSandbox(argument: _agent_v1_TransitionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  pauseSandbox(argument: _agent_v1_TransitionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  pauseSandbox(argument: _agent_v1_TransitionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  pauseSandbox(argument: _agent_v1_TransitionRequest, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  
  ReadFile(argument: _agent_v1_ReadFileRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_FileChunk__Output>;
  ReadFile(argument: _agent_v1_ReadFileRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_FileChunk__Output>;
  readFile(argument: _agent_v1_ReadFileRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_FileChunk__Output>;
  readFile(argument: _agent_v1_ReadFileRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_FileChunk__Output>;
  
  ReadOutput(argument: _agent_v1_ReadOutputRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_OutputEvent__Output>;
  ReadOutput(argument: _agent_v1_ReadOutputRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_OutputEvent__Output>;
  readOutput(argument: _agent_v1_ReadOutputRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_OutputEvent__Output>;
  readOutput(argument: _agent_v1_ReadOutputRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_OutputEvent__Output>;
  
  RemoveFile(argument: _agent_v1_RemoveFileRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_RemoveFileResponse__Output>): grpc.ClientUnaryCall;
  RemoveFile(argument: _agent_v1_RemoveFileRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_RemoveFileResponse__Output>): grpc.ClientUnaryCall;
  RemoveFile(argument: _agent_v1_RemoveFileRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_RemoveFileResponse__Output>): grpc.ClientUnaryCall;
  RemoveFile(argument: _agent_v1_RemoveFileRequest, callback: grpc.requestCallback<_agent_v1_RemoveFileResponse__Output>): grpc.ClientUnaryCall;
  removeFile(argument: _agent_v1_RemoveFileRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_RemoveFileResponse__Output>): grpc.ClientUnaryCall;
  removeFile(argument: _agent_v1_RemoveFileRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_RemoveFileResponse__Output>): grpc.ClientUnaryCall;
  removeFile(argument: _agent_v1_RemoveFileRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_RemoveFileResponse__Output>): grpc.ClientUnaryCall;
  removeFile(argument: _agent_v1_RemoveFileRequest, callback: grpc.requestCallback<_agent_v1_RemoveFileResponse__Output>): grpc.ClientUnaryCall;
  
  RenameFile(argument: _agent_v1_RenameFileRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_RenameFileResponse__Output>): grpc.ClientUnaryCall;
  RenameFile(argument: _agent_v1_RenameFileRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_RenameFileResponse__Output>): grpc.ClientUnaryCall;
  RenameFile(argument: _agent_v1_RenameFileRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_RenameFileResponse__Output>): grpc.ClientUnaryCall;
  RenameFile(argument: _agent_v1_RenameFileRequest, callback: grpc.requestCallback<_agent_v1_RenameFileResponse__Output>): grpc.ClientUnaryCall;
  renameFile(argument: _agent_v1_RenameFileRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_RenameFileResponse__Output>): grpc.ClientUnaryCall;
  renameFile(argument: _agent_v1_RenameFileRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_RenameFileResponse__Output>): grpc.ClientUnaryCall;
  renameFile(argument: _agent_v1_RenameFileRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_RenameFileResponse__Output>): grpc.ClientUnaryCall;
  renameFile(argument: _agent_v1_RenameFileRequest, callback: grpc.requestCallback<_agent_v1_RenameFileResponse__Output>): grpc.ClientUnaryCall;
  
  RestoreSandbox(argument: _agent_v1_CreateSandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  RestoreSandbox(argument: _agent_v1_CreateSandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  RestoreSandbox(argument: _agent_v1_CreateSandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  RestoreSandbox(argument: _agent_v1_CreateSandboxRequest, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  restoreSandbox(argument: _agent_v1_CreateSandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  restoreSandbox(argument: _agent_v1_CreateSandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  restoreSandbox(argument: _agent_v1_CreateSandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  restoreSandbox(argument: _agent_v1_CreateSandboxRequest, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  
  ResumeSandbox(argument: _agent_v1_GetSandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  ResumeSandbox(argument: _agent_v1_GetSandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  ResumeSandbox(argument: _agent_v1_GetSandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  ResumeSandbox(argument: _agent_v1_GetSandboxRequest, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  resumeSandbox(argument: _agent_v1_GetSandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  resumeSandbox(argument: _agent_v1_GetSandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  resumeSandbox(argument: _agent_v1_GetSandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  resumeSandbox(argument: _agent_v1_GetSandboxRequest, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  
  SetEgress(argument: _agent_v1_SetEgressRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  SetEgress(argument: _agent_v1_SetEgressRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  SetEgress(argument: _agent_v1_SetEgressRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  SetEgress(argument: _agent_v1_SetEgressRequest, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  setEgress(argument: _agent_v1_SetEgressRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  setEgress(argument: _agent_v1_SetEgressRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  setEgress(argument: _agent_v1_SetEgressRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  setEgress(argument: _agent_v1_SetEgressRequest, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  
  SnapshotSandbox(argument: _agent_v1_SnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_SnapshotResponse__Output>): grpc.ClientUnaryCall;
  SnapshotSandbox(argument: _agent_v1_SnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_SnapshotResponse__Output>): grpc.ClientUnaryCall;
  SnapshotSandbox(argument: _agent_v1_SnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_SnapshotResponse__Output>): grpc.ClientUnaryCall;
  SnapshotSandbox(argument: _agent_v1_SnapshotRequest, callback: grpc.requestCallback<_agent_v1_SnapshotResponse__Output>): grpc.ClientUnaryCall;
  snapshotSandbox(argument: _agent_v1_SnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_SnapshotResponse__Output>): grpc.ClientUnaryCall;
  snapshotSandbox(argument: _agent_v1_SnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_SnapshotResponse__Output>): grpc.ClientUnaryCall;
  snapshotSandbox(argument: _agent_v1_SnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_SnapshotResponse__Output>): grpc.ClientUnaryCall;
  snapshotSandbox(argument: _agent_v1_SnapshotRequest, callback: grpc.requestCallback<_agent_v1_SnapshotResponse__Output>): grpc.ClientUnaryCall;
  
  StatFile(argument: _agent_v1_StatFileRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_FileStat__Output>): grpc.ClientUnaryCall;
  StatFile(argument: _agent_v1_StatFileRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_FileStat__Output>): grpc.ClientUnaryCall;
  StatFile(argument: _agent_v1_StatFileRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_FileStat__Output>): grpc.ClientUnaryCall;
  StatFile(argument: _agent_v1_StatFileRequest, callback: grpc.requestCallback<_agent_v1_FileStat__Output>): grpc.ClientUnaryCall;
  statFile(argument: _agent_v1_StatFileRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_FileStat__Output>): grpc.ClientUnaryCall;
  statFile(argument: _agent_v1_StatFileRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_FileStat__Output>): grpc.ClientUnaryCall;
  statFile(argument: _agent_v1_StatFileRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_FileStat__Output>): grpc.ClientUnaryCall;
  statFile(argument: _agent_v1_StatFileRequest, callback: grpc.requestCallback<_agent_v1_FileStat__Output>): grpc.ClientUnaryCall;
  
  WriteFile(argument: _agent_v1_WriteFileRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_WriteFileResponse__Output>): grpc.ClientUnaryCall;
  WriteFile(argument: _agent_v1_WriteFileRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_WriteFileResponse__Output>): grpc.ClientUnaryCall;
  WriteFile(argument: _agent_v1_WriteFileRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_WriteFileResponse__Output>): grpc.ClientUnaryCall;
  WriteFile(argument: _agent_v1_WriteFileRequest, callback: grpc.requestCallback<_agent_v1_WriteFileResponse__Output>): grpc.ClientUnaryCall;
  writeFile(argument: _agent_v1_WriteFileRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_WriteFileResponse__Output>): grpc.ClientUnaryCall;
  writeFile(argument: _agent_v1_WriteFileRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_WriteFileResponse__Output>): grpc.ClientUnaryCall;
  writeFile(argument: _agent_v1_WriteFileRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_WriteFileResponse__Output>): grpc.ClientUnaryCall;
  writeFile(argument: _agent_v1_WriteFileRequest, callback: grpc.requestCallback<_agent_v1_WriteFileResponse__Output>): grpc.ClientUnaryCall;
  
  WriteStdin(argument: _agent_v1_WriteStdinRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_WriteStdinResponse__Output>): grpc.ClientUnaryCall;
  WriteStdin(argument: _agent_v1_WriteStdinRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_WriteStdinResponse__Output>): grpc.ClientUnaryCall;
  WriteStdin(argument: _agent_v1_WriteStdinRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_WriteStdinResponse__Output>): grpc.ClientUnaryCall;
  WriteStdin(argument: _agent_v1_WriteStdinRequest, callback: grpc.requestCallback<_agent_v1_WriteStdinResponse__Output>): grpc.ClientUnaryCall;
  writeStdin(argument: _agent_v1_WriteStdinRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_WriteStdinResponse__Output>): grpc.ClientUnaryCall;
  writeStdin(argument: _agent_v1_WriteStdinRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_WriteStdinResponse__Output>): grpc.ClientUnaryCall;
  writeStdin(argument: _agent_v1_WriteStdinRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_WriteStdinResponse__Output>): grpc.ClientUnaryCall;
  writeStdin(argument: _agent_v1_WriteStdinRequest, callback: grpc.requestCallback<_agent_v1_WriteStdinResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface AgentHandlers extends grpc.UntypedServiceImplementation {
  CreateSandbox: grpc.handleUnaryCall<_agent_v1_CreateSandboxRequest__Output, _agent_v1_Sandbox>;
  
  DeleteSnapshot: grpc.handleUnaryCall<_agent_v1_DeleteSnapshotRequest__Output, _agent_v1_DeleteSnapshotResponse>;
  
  DestroySandbox: grpc.handleUnaryCall<_agent_v1_DestroySandboxRequest__Output, _agent_v1_DestroySandboxResponse>;
  
  Exec: grpc.handleServerStreamingCall<_agent_v1_RunSpec__Output, _agent_v1_ExecEvent>;
  
  ForkSandbox: grpc.handleUnaryCall<_agent_v1_ForkSandboxRequest__Output, _agent_v1_ForkSandboxResponse>;
  
  GetNodeInfo: grpc.handleUnaryCall<_agent_v1_GetNodeInfoRequest__Output, _agent_v1_NodeInfo>;
  
  GetSandbox: grpc.handleUnaryCall<_agent_v1_GetSandboxRequest__Output, _agent_v1_Sandbox>;
  
  HibernateSandbox: grpc.handleUnaryCall<_agent_v1_TransitionRequest__Output, _agent_v1_HibernateResponse>;
  
  KillProcesses: grpc.handleUnaryCall<_agent_v1_KillProcessesRequest__Output, _agent_v1_KillProcessesResponse>;
  
  ListFiles: grpc.handleUnaryCall<_agent_v1_ListFilesRequest__Output, _agent_v1_ListFilesResponse>;
  
  ListProcesses: grpc.handleUnaryCall<_agent_v1_ListProcessesRequest__Output, _agent_v1_ListProcessesResponse>;
  
  MakeDirectory: grpc.handleUnaryCall<_agent_v1_MakeDirectoryRequest__Output, _agent_v1_MakeDirectoryResponse>;
  
  ManageContexts: grpc.handleUnaryCall<_agent_v1_ContextsRequest__Output, _agent_v1_ContextsResponse>;
  
  OpenTerminal: grpc.handleBidiStreamingCall<_agent_v1_TerminalInput__Output, _agent_v1_TerminalOutput>;
  
  PauseSandbox: grpc.handleUnaryCall<_agent_v1_TransitionRequest__Output, _agent_v1_Sandbox>;
  
  ReadFile: grpc.handleServerStreamingCall<_agent_v1_ReadFileRequest__Output, _agent_v1_FileChunk>;
  
  ReadOutput: grpc.handleServerStreamingCall<_agent_v1_ReadOutputRequest__Output, _agent_v1_OutputEvent>;
  
  RemoveFile: grpc.handleUnaryCall<_agent_v1_RemoveFileRequest__Output, _agent_v1_RemoveFileResponse>;
  
  RenameFile: grpc.handleUnaryCall<_agent_v1_RenameFileRequest__Output, _agent_v1_RenameFileResponse>;
  
  RestoreSandbox: grpc.handleUnaryCall<_agent_v1_CreateSandboxRequest__Output, _agent_v1_Sandbox>;
  
  ResumeSandbox: grpc.handleUnaryCall<_agent_v1_GetSandboxRequest__Output, _agent_v1_Sandbox>;
  
  SetEgress: grpc.handleUnaryCall<_agent_v1_SetEgressRequest__Output, _agent_v1_Sandbox>;
  
  SnapshotSandbox: grpc.handleUnaryCall<_agent_v1_SnapshotRequest__Output, _agent_v1_SnapshotResponse>;
  
  StatFile: grpc.handleUnaryCall<_agent_v1_StatFileRequest__Output, _agent_v1_FileStat>;
  
  WriteFile: grpc.handleUnaryCall<_agent_v1_WriteFileRequest__Output, _agent_v1_WriteFileResponse>;
  
  WriteStdin: grpc.handleUnaryCall<_agent_v1_WriteStdinRequest__Output, _agent_v1_WriteStdinResponse>;
  
}

export interface AgentDefinition extends grpc.ServiceDefinition {
  CreateSandbox: MethodDefinition<_agent_v1_CreateSandboxRequest, _agent_v1_Sandbox, _agent_v1_CreateSandboxRequest__Output, _agent_v1_Sandbox__Output>
  DeleteSnapshot: MethodDefinition<_agent_v1_DeleteSnapshotRequest, _agent_v1_DeleteSnapshotResponse, _agent_v1_DeleteSnapshotRequest__Output, _agent_v1_DeleteSnapshotResponse__Output>
  DestroySandbox: MethodDefinition<_agent_v1_DestroySandboxRequest, _agent_v1_DestroySandboxResponse, _agent_v1_DestroySandboxRequest__Output, _agent_v1_DestroySandboxResponse__Output>
  Exec: MethodDefinition<_agent_v1_RunSpec, _agent_v1_ExecEvent, _agent_v1_RunSpec__Output, _agent_v1_ExecEvent__Output>
  ForkSandbox: MethodDefinition<_agent_v1_ForkSandboxRequest, _agent_v1_ForkSandboxResponse, _agent_v1_ForkSandboxRequest__Output, _agent_v1_ForkSandboxResponse__Output>
  GetNodeInfo: MethodDefinition<_agent_v1_GetNodeInfoRequest, _agent_v1_NodeInfo, _agent_v1_GetNodeInfoRequest__Output, _agent_v1_NodeInfo__Output>
  GetSandbox: MethodDefinition<_agent_v1_GetSandboxRequest, _agent_v1_Sandbox, _agent_v1_GetSandboxRequest__Output, _agent_v1_Sandbox__Output>
  HibernateSandbox: MethodDefinition<_agent_v1_TransitionRequest, _agent_v1_HibernateResponse, _agent_v1_TransitionRequest__Output, _agent_v1_HibernateResponse__Output>
  KillProcesses: MethodDefinition<_agent_v1_KillProcessesRequest, _agent_v1_KillProcessesResponse, _agent_v1_KillProcessesRequest__Output, _agent_v1_KillProcessesResponse__Output>
  ListFiles: MethodDefinition<_agent_v1_ListFilesRequest, _agent_v1_ListFilesResponse, _agent_v1_ListFilesRequest__Output, _agent_v1_ListFilesResponse__Output>
  ListProcesses: MethodDefinition<_agent_v1_ListProcessesRequest, _agent_v1_ListProcessesResponse, _agent_v1_ListProcessesRequest__Output, _agent_v1_ListProcessesResponse__Output>
  MakeDirectory: MethodDefinition<_agent_v1_MakeDirectoryRequest, _agent_v1_MakeDirectoryResponse, _agent_v1_MakeDirectoryRequest__Output, _agent_v1_MakeDirectoryResponse__Output>
  ManageContexts: MethodDefinition<_agent_v1_ContextsRequest, _agent_v1_ContextsResponse, _agent_v1_ContextsRequest__Output, _agent_v1_ContextsResponse__Output>
  OpenTerminal: MethodDefinition<_agent_v1_TerminalInput, _agent_v1_TerminalOutput, _agent_v1_TerminalInput__Output, _agent_v1_TerminalOutput__Output>
  PauseSandbox: MethodDefinition<_agent_v1_TransitionRequest, _agent_v1_Sandbox, _agent_v1_TransitionRequest__Output, _agent_v1_Sandbox__Output>
  ReadFile: MethodDefinition<_agent_v1_ReadFileRequest, _agent_v1_FileChunk, _agent_v1_ReadFileRequest__Output, _agent_v1_FileChunk__Output>
  ReadOutput: MethodDefinition<_agent_v1_ReadOutputRequest, _agent_v1_OutputEvent, _agent_v1_ReadOutputRequest__Output, _agent_v1_OutputEvent__Output>
  RemoveFile: MethodDefinition<_agent_v1_RemoveFileRequest, _agent_v1_RemoveFileResponse, _agent_v1_RemoveFileRequest__Output, _agent_v1_RemoveFileResponse__Output>
  RenameFile: MethodDefinition<_agent_v1_RenameFileRequest, _agent_v1_RenameFileResponse, _agent_v1_RenameFileRequest__Output, _agent_v1_RenameFileResponse__Output>
  RestoreSandbox: MethodDefinition<_agent_v1_CreateSandboxRequest, _agent_v1_Sandbox, _agent_v1_CreateSandboxRequest__Output, _agent_v1_Sandbox__Output>
  ResumeSandbox: MethodDefinition<_agent_v1_GetSandboxRequest, _agent_v1_Sandbox, _agent_v1_GetSandboxRequest__Output, _agent_v1_Sandbox__Output>
  SetEgress: MethodDefinition<_agent_v1_SetEgressRequest, _agent_v1_Sandbox, _agent_v1_SetEgressRequest__Output, _agent_v1_Sandbox__Output>
  SnapshotSandbox: MethodDefinition<_agent_v1_SnapshotRequest, _agent_v1_SnapshotResponse, _agent_v1_SnapshotRequest__Output, _agent_v1_SnapshotResponse__Output>
  StatFile: MethodDefinition<_agent_v1_StatFileRequest, _agent_v1_FileStat, _agent_v1_StatFileRequest__Output, _agent_v1_FileStat__Output>
  WriteFile: MethodDefinition<_agent_v1_WriteFileRequest, _agent_v1_WriteFileResponse, _agent_v1_WriteFileRequest__Output, _agent_v1_WriteFileResponse__Output>
  WriteStdin: MethodDefinition<_agent_v1_WriteStdinRequest, _agent_v1_WriteStdinResponse, _agent_v1_WriteStdinRequest__Output, _agent_v1_WriteStdinResponse__Output>
}
