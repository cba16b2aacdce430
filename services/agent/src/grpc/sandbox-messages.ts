import {
  ALLOW_ALL,
  isAllowAll,
  isEgressProblem,
  parseEgressPolicy,
  type EgressPolicy,
} from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import type { CreateSandboxRequest__Output, EgressPolicy__Output, Sandbox } from '@sandbox/proto';
import type { SandboxInfo, SandboxSpec } from '../runtime/sandbox-runtime';

/* A sandbox's messages on the wire and the runtime's types they convert to and from. */

export const toSandbox = (info: SandboxInfo): Sandbox => ({
  sessionId: info.sessionId,
  containerId: info.containerId,
  status: info.status,
  filesCount: info.filesCount,
  activeProcesses: info.activeProcesses,
});

/**
 * An egress policy from the wire, checked as the gateway checked it (a node enforces nothing it
 * cannot read); absent: allow-all.
 */
export function egressPolicy(egress: EgressPolicy__Output | null): EgressPolicy {
  if (egress === null) return ALLOW_ALL;
  if (egress.default !== 'allow' && egress.default !== 'deny') {
    throw new AppError('invalid_request', 'egress.default must be "allow" or "deny"', {
      details: { field: 'egress.default', value: egress.default },
    });
  }
  const parsed = parseEgressPolicy(
    { default: egress.default, allow: egress.allow, deny: egress.deny },
    egress.default,
  );
  if (isEgressProblem(parsed)) {
    throw new AppError('invalid_request', `${parsed.field} ${parsed.message}`, {
      details: { field: parsed.field, value: parsed.value },
    });
  }
  return parsed;
}

export function sandboxSpec(request: CreateSandboxRequest__Output): SandboxSpec {
  const limits = request.limits;
  if (limits === null || !request.sessionId) {
    throw new AppError('invalid_request', 'sessionId and limits are required');
  }
  const egress = egressPolicy(request.egress);
  return {
    sessionId: request.sessionId,
    accountId: request.accountId,
    limits: {
      memoryMb: limits.memoryMb,
      cpu: limits.cpu,
      diskMb: limits.diskMb,
      pids: limits.pids,
    },
    ...(isAllowAll(egress) ? {} : { egress }),
  };
}
