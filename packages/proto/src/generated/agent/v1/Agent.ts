// Original file: proto/agent/v1/agent.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CreateSandboxRequest as _agent_v1_CreateSandboxRequest, CreateSandboxRequest__Output as _agent_v1_CreateSandboxRequest__Output } from '../../agent/v1/CreateSandboxRequest';
import type { DestroySandboxRequest as _agent_v1_DestroySandboxRequest, DestroySandboxRequest__Output as _agent_v1_DestroySandboxRequest__Output } from '../../agent/v1/DestroySandboxRequest';
import type { DestroySandboxResponse as _agent_v1_DestroySandboxResponse, DestroySandboxResponse__Output as _agent_v1_DestroySandboxResponse__Output } from '../../agent/v1/DestroySandboxResponse';
import type { ExecEvent as _agent_v1_ExecEvent, ExecEvent__Output as _agent_v1_ExecEvent__Output } from '../../agent/v1/ExecEvent';
import type { ExecRequest as _agent_v1_ExecRequest, ExecRequest__Output as _agent_v1_ExecRequest__Output } from '../../agent/v1/ExecRequest';
import type { GetNodeInfoRequest as _agent_v1_GetNodeInfoRequest, GetNodeInfoRequest__Output as _agent_v1_GetNodeInfoRequest__Output } from '../../agent/v1/GetNodeInfoRequest';
import type { GetSandboxRequest as _agent_v1_GetSandboxRequest, GetSandboxRequest__Output as _agent_v1_GetSandboxRequest__Output } from '../../agent/v1/GetSandboxRequest';
import type { NodeInfo as _agent_v1_NodeInfo, NodeInfo__Output as _agent_v1_NodeInfo__Output } from '../../agent/v1/NodeInfo';
import type { Sandbox as _agent_v1_Sandbox, Sandbox__Output as _agent_v1_Sandbox__Output } from '../../agent/v1/Sandbox';

export interface AgentClient extends grpc.Client {
  CreateSandbox(argument: _agent_v1_CreateSandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  CreateSandbox(argument: _agent_v1_CreateSandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  CreateSandbox(argument: _agent_v1_CreateSandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  CreateSandbox(argument: _agent_v1_CreateSandboxRequest, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  createSandbox(argument: _agent_v1_CreateSandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  createSandbox(argument: _agent_v1_CreateSandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  createSandbox(argument: _agent_v1_CreateSandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  createSandbox(argument: _agent_v1_CreateSandboxRequest, callback: grpc.requestCallback<_agent_v1_Sandbox__Output>): grpc.ClientUnaryCall;
  
  DestroySandbox(argument: _agent_v1_DestroySandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  DestroySandbox(argument: _agent_v1_DestroySandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  DestroySandbox(argument: _agent_v1_DestroySandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  DestroySandbox(argument: _agent_v1_DestroySandboxRequest, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  destroySandbox(argument: _agent_v1_DestroySandboxRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  destroySandbox(argument: _agent_v1_DestroySandboxRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  destroySandbox(argument: _agent_v1_DestroySandboxRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  destroySandbox(argument: _agent_v1_DestroySandboxRequest, callback: grpc.requestCallback<_agent_v1_DestroySandboxResponse__Output>): grpc.ClientUnaryCall;
  
  Exec(argument: _agent_v1_ExecRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_ExecEvent__Output>;
  Exec(argument: _agent_v1_ExecRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_ExecEvent__Output>;
  exec(argument: _agent_v1_ExecRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_ExecEvent__Output>;
  exec(argument: _agent_v1_ExecRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_agent_v1_ExecEvent__Output>;
  
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
  
}

export interface AgentHandlers extends grpc.UntypedServiceImplementation {
  CreateSandbox: grpc.handleUnaryCall<_agent_v1_CreateSandboxRequest__Output, _agent_v1_Sandbox>;
  
  DestroySandbox: grpc.handleUnaryCall<_agent_v1_DestroySandboxRequest__Output, _agent_v1_DestroySandboxResponse>;
  
  Exec: grpc.handleServerStreamingCall<_agent_v1_ExecRequest__Output, _agent_v1_ExecEvent>;
  
  GetNodeInfo: grpc.handleUnaryCall<_agent_v1_GetNodeInfoRequest__Output, _agent_v1_NodeInfo>;
  
  GetSandbox: grpc.handleUnaryCall<_agent_v1_GetSandboxRequest__Output, _agent_v1_Sandbox>;
  
}

export interface AgentDefinition extends grpc.ServiceDefinition {
  CreateSandbox: MethodDefinition<_agent_v1_CreateSandboxRequest, _agent_v1_Sandbox, _agent_v1_CreateSandboxRequest__Output, _agent_v1_Sandbox__Output>
  DestroySandbox: MethodDefinition<_agent_v1_DestroySandboxRequest, _agent_v1_DestroySandboxResponse, _agent_v1_DestroySandboxRequest__Output, _agent_v1_DestroySandboxResponse__Output>
  Exec: MethodDefinition<_agent_v1_ExecRequest, _agent_v1_ExecEvent, _agent_v1_ExecRequest__Output, _agent_v1_ExecEvent__Output>
  GetNodeInfo: MethodDefinition<_agent_v1_GetNodeInfoRequest, _agent_v1_NodeInfo, _agent_v1_GetNodeInfoRequest__Output, _agent_v1_NodeInfo__Output>
  GetSandbox: MethodDefinition<_agent_v1_GetSandboxRequest, _agent_v1_Sandbox, _agent_v1_GetSandboxRequest__Output, _agent_v1_Sandbox__Output>
}
