import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { AgentClient as _agent_v1_AgentClient, AgentDefinition as _agent_v1_AgentDefinition } from './agent/v1/Agent';
import type { CellError as _agent_v1_CellError, CellError__Output as _agent_v1_CellError__Output } from './agent/v1/CellError';
import type { CellOutcome as _agent_v1_CellOutcome, CellOutcome__Output as _agent_v1_CellOutcome__Output } from './agent/v1/CellOutcome';
import type { CellResult as _agent_v1_CellResult, CellResult__Output as _agent_v1_CellResult__Output } from './agent/v1/CellResult';
import type { CodeContext as _agent_v1_CodeContext, CodeContext__Output as _agent_v1_CodeContext__Output } from './agent/v1/CodeContext';
import type { ContextsRequest as _agent_v1_ContextsRequest, ContextsRequest__Output as _agent_v1_ContextsRequest__Output } from './agent/v1/ContextsRequest';
import type { ContextsResponse as _agent_v1_ContextsResponse, ContextsResponse__Output as _agent_v1_ContextsResponse__Output } from './agent/v1/ContextsResponse';
import type { CreateSandboxRequest as _agent_v1_CreateSandboxRequest, CreateSandboxRequest__Output as _agent_v1_CreateSandboxRequest__Output } from './agent/v1/CreateSandboxRequest';
import type { DeleteSnapshotRequest as _agent_v1_DeleteSnapshotRequest, DeleteSnapshotRequest__Output as _agent_v1_DeleteSnapshotRequest__Output } from './agent/v1/DeleteSnapshotRequest';
import type { DeleteSnapshotResponse as _agent_v1_DeleteSnapshotResponse, DeleteSnapshotResponse__Output as _agent_v1_DeleteSnapshotResponse__Output } from './agent/v1/DeleteSnapshotResponse';
import type { DestroySandboxRequest as _agent_v1_DestroySandboxRequest, DestroySandboxRequest__Output as _agent_v1_DestroySandboxRequest__Output } from './agent/v1/DestroySandboxRequest';
import type { DestroySandboxResponse as _agent_v1_DestroySandboxResponse, DestroySandboxResponse__Output as _agent_v1_DestroySandboxResponse__Output } from './agent/v1/DestroySandboxResponse';
import type { EgressPolicy as _agent_v1_EgressPolicy, EgressPolicy__Output as _agent_v1_EgressPolicy__Output } from './agent/v1/EgressPolicy';
import type { ExecEvent as _agent_v1_ExecEvent, ExecEvent__Output as _agent_v1_ExecEvent__Output } from './agent/v1/ExecEvent';
import type { ExecStarted as _agent_v1_ExecStarted, ExecStarted__Output as _agent_v1_ExecStarted__Output } from './agent/v1/ExecStarted';
import type { FileChunk as _agent_v1_FileChunk, FileChunk__Output as _agent_v1_FileChunk__Output } from './agent/v1/FileChunk';
import type { FileEntry as _agent_v1_FileEntry, FileEntry__Output as _agent_v1_FileEntry__Output } from './agent/v1/FileEntry';
import type { FileInput as _agent_v1_FileInput, FileInput__Output as _agent_v1_FileInput__Output } from './agent/v1/FileInput';
import type { FileStat as _agent_v1_FileStat, FileStat__Output as _agent_v1_FileStat__Output } from './agent/v1/FileStat';
import type { ForkSandboxRequest as _agent_v1_ForkSandboxRequest, ForkSandboxRequest__Output as _agent_v1_ForkSandboxRequest__Output } from './agent/v1/ForkSandboxRequest';
import type { ForkSandboxResponse as _agent_v1_ForkSandboxResponse, ForkSandboxResponse__Output as _agent_v1_ForkSandboxResponse__Output } from './agent/v1/ForkSandboxResponse';
import type { GetNodeInfoRequest as _agent_v1_GetNodeInfoRequest, GetNodeInfoRequest__Output as _agent_v1_GetNodeInfoRequest__Output } from './agent/v1/GetNodeInfoRequest';
import type { GetSandboxRequest as _agent_v1_GetSandboxRequest, GetSandboxRequest__Output as _agent_v1_GetSandboxRequest__Output } from './agent/v1/GetSandboxRequest';
import type { HibernateResponse as _agent_v1_HibernateResponse, HibernateResponse__Output as _agent_v1_HibernateResponse__Output } from './agent/v1/HibernateResponse';
import type { KillProcessesRequest as _agent_v1_KillProcessesRequest, KillProcessesRequest__Output as _agent_v1_KillProcessesRequest__Output } from './agent/v1/KillProcessesRequest';
import type { KillProcessesResponse as _agent_v1_KillProcessesResponse, KillProcessesResponse__Output as _agent_v1_KillProcessesResponse__Output } from './agent/v1/KillProcessesResponse';
import type { LimitExceeded as _agent_v1_LimitExceeded, LimitExceeded__Output as _agent_v1_LimitExceeded__Output } from './agent/v1/LimitExceeded';
import type { ListFilesRequest as _agent_v1_ListFilesRequest, ListFilesRequest__Output as _agent_v1_ListFilesRequest__Output } from './agent/v1/ListFilesRequest';
import type { ListFilesResponse as _agent_v1_ListFilesResponse, ListFilesResponse__Output as _agent_v1_ListFilesResponse__Output } from './agent/v1/ListFilesResponse';
import type { ListProcessesRequest as _agent_v1_ListProcessesRequest, ListProcessesRequest__Output as _agent_v1_ListProcessesRequest__Output } from './agent/v1/ListProcessesRequest';
import type { ListProcessesResponse as _agent_v1_ListProcessesResponse, ListProcessesResponse__Output as _agent_v1_ListProcessesResponse__Output } from './agent/v1/ListProcessesResponse';
import type { LogPosition as _agent_v1_LogPosition, LogPosition__Output as _agent_v1_LogPosition__Output } from './agent/v1/LogPosition';
import type { MakeDirectoryRequest as _agent_v1_MakeDirectoryRequest, MakeDirectoryRequest__Output as _agent_v1_MakeDirectoryRequest__Output } from './agent/v1/MakeDirectoryRequest';
import type { MakeDirectoryResponse as _agent_v1_MakeDirectoryResponse, MakeDirectoryResponse__Output as _agent_v1_MakeDirectoryResponse__Output } from './agent/v1/MakeDirectoryResponse';
import type { NodeInfo as _agent_v1_NodeInfo, NodeInfo__Output as _agent_v1_NodeInfo__Output } from './agent/v1/NodeInfo';
import type { OutputChunk as _agent_v1_OutputChunk, OutputChunk__Output as _agent_v1_OutputChunk__Output } from './agent/v1/OutputChunk';
import type { OutputEvent as _agent_v1_OutputEvent, OutputEvent__Output as _agent_v1_OutputEvent__Output } from './agent/v1/OutputEvent';
import type { PoolShape as _agent_v1_PoolShape, PoolShape__Output as _agent_v1_PoolShape__Output } from './agent/v1/PoolShape';
import type { ProcessInfo as _agent_v1_ProcessInfo, ProcessInfo__Output as _agent_v1_ProcessInfo__Output } from './agent/v1/ProcessInfo';
import type { ProcessRef as _agent_v1_ProcessRef, ProcessRef__Output as _agent_v1_ProcessRef__Output } from './agent/v1/ProcessRef';
import type { ReadFileRequest as _agent_v1_ReadFileRequest, ReadFileRequest__Output as _agent_v1_ReadFileRequest__Output } from './agent/v1/ReadFileRequest';
import type { ReadOutputRequest as _agent_v1_ReadOutputRequest, ReadOutputRequest__Output as _agent_v1_ReadOutputRequest__Output } from './agent/v1/ReadOutputRequest';
import type { RemoveFileRequest as _agent_v1_RemoveFileRequest, RemoveFileRequest__Output as _agent_v1_RemoveFileRequest__Output } from './agent/v1/RemoveFileRequest';
import type { RemoveFileResponse as _agent_v1_RemoveFileResponse, RemoveFileResponse__Output as _agent_v1_RemoveFileResponse__Output } from './agent/v1/RemoveFileResponse';
import type { RenameFileRequest as _agent_v1_RenameFileRequest, RenameFileRequest__Output as _agent_v1_RenameFileRequest__Output } from './agent/v1/RenameFileRequest';
import type { RenameFileResponse as _agent_v1_RenameFileResponse, RenameFileResponse__Output as _agent_v1_RenameFileResponse__Output } from './agent/v1/RenameFileResponse';
import type { ResourceLimits as _agent_v1_ResourceLimits, ResourceLimits__Output as _agent_v1_ResourceLimits__Output } from './agent/v1/ResourceLimits';
import type { RunResult as _agent_v1_RunResult, RunResult__Output as _agent_v1_RunResult__Output } from './agent/v1/RunResult';
import type { RunSpec as _agent_v1_RunSpec, RunSpec__Output as _agent_v1_RunSpec__Output } from './agent/v1/RunSpec';
import type { Sandbox as _agent_v1_Sandbox, Sandbox__Output as _agent_v1_Sandbox__Output } from './agent/v1/Sandbox';
import type { SetEgressRequest as _agent_v1_SetEgressRequest, SetEgressRequest__Output as _agent_v1_SetEgressRequest__Output } from './agent/v1/SetEgressRequest';
import type { SnapshotRequest as _agent_v1_SnapshotRequest, SnapshotRequest__Output as _agent_v1_SnapshotRequest__Output } from './agent/v1/SnapshotRequest';
import type { SnapshotResponse as _agent_v1_SnapshotResponse, SnapshotResponse__Output as _agent_v1_SnapshotResponse__Output } from './agent/v1/SnapshotResponse';
import type { StatFileRequest as _agent_v1_StatFileRequest, StatFileRequest__Output as _agent_v1_StatFileRequest__Output } from './agent/v1/StatFileRequest';
import type { TerminalExited as _agent_v1_TerminalExited, TerminalExited__Output as _agent_v1_TerminalExited__Output } from './agent/v1/TerminalExited';
import type { TerminalInput as _agent_v1_TerminalInput, TerminalInput__Output as _agent_v1_TerminalInput__Output } from './agent/v1/TerminalInput';
import type { TerminalOutput as _agent_v1_TerminalOutput, TerminalOutput__Output as _agent_v1_TerminalOutput__Output } from './agent/v1/TerminalOutput';
import type { TerminalSize as _agent_v1_TerminalSize, TerminalSize__Output as _agent_v1_TerminalSize__Output } from './agent/v1/TerminalSize';
import type { TerminalStart as _agent_v1_TerminalStart, TerminalStart__Output as _agent_v1_TerminalStart__Output } from './agent/v1/TerminalStart';
import type { TerminalStarted as _agent_v1_TerminalStarted, TerminalStarted__Output as _agent_v1_TerminalStarted__Output } from './agent/v1/TerminalStarted';
import type { TransitionRequest as _agent_v1_TransitionRequest, TransitionRequest__Output as _agent_v1_TransitionRequest__Output } from './agent/v1/TransitionRequest';
import type { WriteFileRequest as _agent_v1_WriteFileRequest, WriteFileRequest__Output as _agent_v1_WriteFileRequest__Output } from './agent/v1/WriteFileRequest';
import type { WriteFileResponse as _agent_v1_WriteFileResponse, WriteFileResponse__Output as _agent_v1_WriteFileResponse__Output } from './agent/v1/WriteFileResponse';
import type { WriteStdinRequest as _agent_v1_WriteStdinRequest, WriteStdinRequest__Output as _agent_v1_WriteStdinRequest__Output } from './agent/v1/WriteStdinRequest';
import type { WriteStdinResponse as _agent_v1_WriteStdinResponse, WriteStdinResponse__Output as _agent_v1_WriteStdinResponse__Output } from './agent/v1/WriteStdinResponse';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  agent: {
    v1: {
      Agent: SubtypeConstructor<typeof grpc.Client, _agent_v1_AgentClient> & { service: _agent_v1_AgentDefinition }
      CellError: MessageTypeDefinition<_agent_v1_CellError, _agent_v1_CellError__Output>
      CellOutcome: MessageTypeDefinition<_agent_v1_CellOutcome, _agent_v1_CellOutcome__Output>
      CellResult: MessageTypeDefinition<_agent_v1_CellResult, _agent_v1_CellResult__Output>
      CodeContext: MessageTypeDefinition<_agent_v1_CodeContext, _agent_v1_CodeContext__Output>
      ContextsRequest: MessageTypeDefinition<_agent_v1_ContextsRequest, _agent_v1_ContextsRequest__Output>
      ContextsResponse: MessageTypeDefinition<_agent_v1_ContextsResponse, _agent_v1_ContextsResponse__Output>
      CreateSandboxRequest: MessageTypeDefinition<_agent_v1_CreateSandboxRequest, _agent_v1_CreateSandboxRequest__Output>
      DeleteSnapshotRequest: MessageTypeDefinition<_agent_v1_DeleteSnapshotRequest, _agent_v1_DeleteSnapshotRequest__Output>
      DeleteSnapshotResponse: MessageTypeDefinition<_agent_v1_DeleteSnapshotResponse, _agent_v1_DeleteSnapshotResponse__Output>
      DestroySandboxRequest: MessageTypeDefinition<_agent_v1_DestroySandboxRequest, _agent_v1_DestroySandboxRequest__Output>
      DestroySandboxResponse: MessageTypeDefinition<_agent_v1_DestroySandboxResponse, _agent_v1_DestroySandboxResponse__Output>
      EgressPolicy: MessageTypeDefinition<_agent_v1_EgressPolicy, _agent_v1_EgressPolicy__Output>
      ExecEvent: MessageTypeDefinition<_agent_v1_ExecEvent, _agent_v1_ExecEvent__Output>
      ExecStarted: MessageTypeDefinition<_agent_v1_ExecStarted, _agent_v1_ExecStarted__Output>
      FileChunk: MessageTypeDefinition<_agent_v1_FileChunk, _agent_v1_FileChunk__Output>
      FileEntry: MessageTypeDefinition<_agent_v1_FileEntry, _agent_v1_FileEntry__Output>
      FileInput: MessageTypeDefinition<_agent_v1_FileInput, _agent_v1_FileInput__Output>
      FileStat: MessageTypeDefinition<_agent_v1_FileStat, _agent_v1_FileStat__Output>
      ForkSandboxRequest: MessageTypeDefinition<_agent_v1_ForkSandboxRequest, _agent_v1_ForkSandboxRequest__Output>
      ForkSandboxResponse: MessageTypeDefinition<_agent_v1_ForkSandboxResponse, _agent_v1_ForkSandboxResponse__Output>
      GetNodeInfoRequest: MessageTypeDefinition<_agent_v1_GetNodeInfoRequest, _agent_v1_GetNodeInfoRequest__Output>
      GetSandboxRequest: MessageTypeDefinition<_agent_v1_GetSandboxRequest, _agent_v1_GetSandboxRequest__Output>
      HibernateResponse: MessageTypeDefinition<_agent_v1_HibernateResponse, _agent_v1_HibernateResponse__Output>
      KillProcessesRequest: MessageTypeDefinition<_agent_v1_KillProcessesRequest, _agent_v1_KillProcessesRequest__Output>
      KillProcessesResponse: MessageTypeDefinition<_agent_v1_KillProcessesResponse, _agent_v1_KillProcessesResponse__Output>
      LimitExceeded: MessageTypeDefinition<_agent_v1_LimitExceeded, _agent_v1_LimitExceeded__Output>
      ListFilesRequest: MessageTypeDefinition<_agent_v1_ListFilesRequest, _agent_v1_ListFilesRequest__Output>
      ListFilesResponse: MessageTypeDefinition<_agent_v1_ListFilesResponse, _agent_v1_ListFilesResponse__Output>
      ListProcessesRequest: MessageTypeDefinition<_agent_v1_ListProcessesRequest, _agent_v1_ListProcessesRequest__Output>
      ListProcessesResponse: MessageTypeDefinition<_agent_v1_ListProcessesResponse, _agent_v1_ListProcessesResponse__Output>
      LogPosition: MessageTypeDefinition<_agent_v1_LogPosition, _agent_v1_LogPosition__Output>
      MakeDirectoryRequest: MessageTypeDefinition<_agent_v1_MakeDirectoryRequest, _agent_v1_MakeDirectoryRequest__Output>
      MakeDirectoryResponse: MessageTypeDefinition<_agent_v1_MakeDirectoryResponse, _agent_v1_MakeDirectoryResponse__Output>
      NodeInfo: MessageTypeDefinition<_agent_v1_NodeInfo, _agent_v1_NodeInfo__Output>
      OutputChunk: MessageTypeDefinition<_agent_v1_OutputChunk, _agent_v1_OutputChunk__Output>
      OutputEvent: MessageTypeDefinition<_agent_v1_OutputEvent, _agent_v1_OutputEvent__Output>
      PoolShape: MessageTypeDefinition<_agent_v1_PoolShape, _agent_v1_PoolShape__Output>
      ProcessInfo: MessageTypeDefinition<_agent_v1_ProcessInfo, _agent_v1_ProcessInfo__Output>
      ProcessRef: MessageTypeDefinition<_agent_v1_ProcessRef, _agent_v1_ProcessRef__Output>
      ReadFileRequest: MessageTypeDefinition<_agent_v1_ReadFileRequest, _agent_v1_ReadFileRequest__Output>
      ReadOutputRequest: MessageTypeDefinition<_agent_v1_ReadOutputRequest, _agent_v1_ReadOutputRequest__Output>
      RemoveFileRequest: MessageTypeDefinition<_agent_v1_RemoveFileRequest, _agent_v1_RemoveFileRequest__Output>
      RemoveFileResponse: MessageTypeDefinition<_agent_v1_RemoveFileResponse, _agent_v1_RemoveFileResponse__Output>
      RenameFileRequest: MessageTypeDefinition<_agent_v1_RenameFileRequest, _agent_v1_RenameFileRequest__Output>
      RenameFileResponse: MessageTypeDefinition<_agent_v1_RenameFileResponse, _agent_v1_RenameFileResponse__Output>
      ResourceLimits: MessageTypeDefinition<_agent_v1_ResourceLimits, _agent_v1_ResourceLimits__Output>
      RunResult: MessageTypeDefinition<_agent_v1_RunResult, _agent_v1_RunResult__Output>
      RunSpec: MessageTypeDefinition<_agent_v1_RunSpec, _agent_v1_RunSpec__Output>
      Sandbox: MessageTypeDefinition<_agent_v1_Sandbox, _agent_v1_Sandbox__Output>
      SetEgressRequest: MessageTypeDefinition<_agent_v1_SetEgressRequest, _agent_v1_SetEgressRequest__Output>
      SnapshotRequest: MessageTypeDefinition<_agent_v1_SnapshotRequest, _agent_v1_SnapshotRequest__Output>
      SnapshotResponse: MessageTypeDefinition<_agent_v1_SnapshotResponse, _agent_v1_SnapshotResponse__Output>
      StatFileRequest: MessageTypeDefinition<_agent_v1_StatFileRequest, _agent_v1_StatFileRequest__Output>
      TerminalExited: MessageTypeDefinition<_agent_v1_TerminalExited, _agent_v1_TerminalExited__Output>
      TerminalInput: MessageTypeDefinition<_agent_v1_TerminalInput, _agent_v1_TerminalInput__Output>
      TerminalOutput: MessageTypeDefinition<_agent_v1_TerminalOutput, _agent_v1_TerminalOutput__Output>
      TerminalSize: MessageTypeDefinition<_agent_v1_TerminalSize, _agent_v1_TerminalSize__Output>
      TerminalStart: MessageTypeDefinition<_agent_v1_TerminalStart, _agent_v1_TerminalStart__Output>
      TerminalStarted: MessageTypeDefinition<_agent_v1_TerminalStarted, _agent_v1_TerminalStarted__Output>
      TransitionRequest: MessageTypeDefinition<_agent_v1_TransitionRequest, _agent_v1_TransitionRequest__Output>
      WriteFileRequest: MessageTypeDefinition<_agent_v1_WriteFileRequest, _agent_v1_WriteFileRequest__Output>
      WriteFileResponse: MessageTypeDefinition<_agent_v1_WriteFileResponse, _agent_v1_WriteFileResponse__Output>
      WriteStdinRequest: MessageTypeDefinition<_agent_v1_WriteStdinRequest, _agent_v1_WriteStdinRequest__Output>
      WriteStdinResponse: MessageTypeDefinition<_agent_v1_WriteStdinResponse, _agent_v1_WriteStdinResponse__Output>
    }
  }
}

