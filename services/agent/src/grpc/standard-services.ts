import type * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { agentPackageDefinition } from '@sandbox/proto';
import { HealthImplementation, protoPath as healthProtoPath } from 'grpc-health-check';

/** The Agent service's full name, as health checks and reflection name it. */
export const AGENT_SERVICE = 'agent.v1.Agent';

/** The health of the agent's gRPC server, as its health service tells it. */
export interface AgentHealth {
  /** The agent is stopping: probes see it first, while calls under way finish. */
  stopping(): void;
  /** The container engine stopped answering (not serving), or answers again. */
  engineWedged(wedged: boolean): void;
}

/**
 * The standard health service (grpc_health_probe, Kubernetes gRPC probes) and server
 * reflection (grpcurl) on `server`: neither needs the internal token, neither tells a secret.
 */
export function addStandardServices(server: grpc.Server): AgentHealth {
  const health = new HealthImplementation({ '': 'SERVING', [AGENT_SERVICE]: 'SERVING' });
  health.addToServer(server);
  new ReflectionService({
    ...agentPackageDefinition(),
    ...loadSync(healthProtoPath),
  }).addToServer(server);
  let stopping = false;
  const serving = (status: 'SERVING' | 'NOT_SERVING') => {
    health.setStatus('', status);
    health.setStatus(AGENT_SERVICE, status);
  };
  return {
    stopping: () => {
      stopping = true;
      serving('NOT_SERVING');
    },
    engineWedged: (wedged) => {
      if (!stopping) serving(wedged ? 'NOT_SERVING' : 'SERVING');
    },
  };
}
