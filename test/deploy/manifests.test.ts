/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-argument,
   @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   YAML documents are untyped here: the Kubernetes schemas are what checks them. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { DaemonSet, Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import {
  AGENT_ENV_NAMES,
  EDGE_PROXY_ENV_NAMES,
  GATEWAY_ENV_NAMES,
  loadAgentConfig,
  loadEdgeProxyConfig,
  loadGatewayConfig,
} from '@sandbox/config';

/**
 * deploy/kubernetes and deploy/compose, validated offline: every Kubernetes object against
 * its schema (kubernetes-models), every environment a component gets against that
 * component's own configuration loader, and the shape operators rely on (probes, budgets,
 * autoscalers, the agent's privileges spelled out, a default-deny network policy).
 */
const ROOT = join(__dirname, '..', '..', 'deploy');
const K8S = join(ROOT, 'kubernetes');

type Doc = Record<string, any>;

const MODELS: Record<string, new (doc: Doc) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/DaemonSet': DaemonSet,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};

function yamlDocs(path: string): Doc[] {
  return parseAllDocuments(readFileSync(path, 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors[0]?.message}`);
    return doc.toJS() as Doc;
  });
}

const manifestFiles = readdirSync(K8S).filter(
  (name) => name.endsWith('.yaml') && name !== 'kustomization.yaml',
);
const objects = manifestFiles.flatMap((name) =>
  yamlDocs(join(K8S, name)).map((doc) => ({ file: name, doc })),
);
const find = (kind: string, name: string): Doc => {
  const found = objects.find((o) => o.doc.kind === kind && o.doc.metadata?.name === name);
  if (found === undefined) throw new Error(`no ${kind} ${name}`);
  return found.doc;
};

it('validates every object against the Kubernetes schemas', () => {
  expect(objects.length).toBeGreaterThan(10);
  for (const { file, doc } of objects) {
    const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
    expect([file, doc.kind, Model !== undefined]).toEqual([file, doc.kind, true]);
    expect(() => new Model!(doc).validate()).not.toThrow();
    if (doc.kind !== 'Namespace') expect(doc.metadata.namespace).toBe('sandbox');
  }
});

it('lists every manifest in the kustomization', () => {
  const [kustomization] = yamlDocs(join(K8S, 'kustomization.yaml'));
  expect([...(kustomization?.resources as string[])].sort()).toEqual([...manifestFiles].sort());
});

it('rejects a broken object (the validation is real)', () => {
  const broken = structuredClone(find('Deployment', 'sandbox-gateway'));
  broken.spec.replicas = 'two';
  expect(() => new Deployment(broken).validate()).toThrow();
});

/** What the container's environment is, with the ConfigMap and Secret it names. */
function containerEnv(container: Doc): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) Object.assign(env, find('ConfigMap', source.configMapRef.name).data);
    if (source.secretRef) Object.assign(env, find('Secret', source.secretRef.name).stringData);
  }
  for (const entry of container.env ?? []) {
    const field = entry.valueFrom?.fieldRef?.fieldPath as string | undefined;
    env[entry.name] =
      field === 'spec.nodeName' ? 'node-1' : field === 'status.hostIP' ? '10.0.0.7' : entry.value;
  }
  return env;
}

const KNOWN = new Set([...GATEWAY_ENV_NAMES, ...AGENT_ENV_NAMES, ...EDGE_PROXY_ENV_NAMES]);
/** Read by a library (the AWS SDK's credential chain), not by our loaders. */
const LIBRARY_ENV = /^AWS_/;

it('gives each component an environment its own loader accepts, with no unknown name', () => {
  const gateway = containerEnv(
    find('Deployment', 'sandbox-gateway').spec.template.spec.containers[0],
  );
  const edge = containerEnv(
    find('Deployment', 'sandbox-edge-proxy').spec.template.spec.containers[0],
  );
  const agent = containerEnv(find('DaemonSet', 'sandbox-agent').spec.template.spec.containers[0]);
  for (const env of [gateway, edge, agent]) {
    for (const name of Object.keys(env)) {
      expect([name, KNOWN.has(name) || LIBRARY_ENV.test(name)]).toEqual([name, true]);
    }
  }
  expect(loadGatewayConfig(gateway)).toMatchObject({
    port: 8080,
    agentNodes: [],
    metrics: { port: 9464 },
    nodeHeartbeatMs: 2000,
  });
  expect(loadEdgeProxyConfig(edge)).toMatchObject({ port: 8081, metrics: { port: 9466 } });
  expect(loadAgentConfig(agent)).toMatchObject({
    nodeId: 'node-1',
    host: '10.0.0.7',
    gatewayUrl: 'http://sandbox-gateway.sandbox.svc:8080',
    blobStore: { kind: 's3', bucket: 'sandbox-workspaces' },
  });
});

it('probes the gateway and the edge proxy, and the agent through the gRPC health service', () => {
  for (const name of ['sandbox-gateway', 'sandbox-edge-proxy']) {
    const [container] = find('Deployment', name).spec.template.spec.containers;
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
  }
  const [agent] = find('DaemonSet', 'sandbox-agent').spec.template.spec.containers;
  expect(agent.readinessProbe.grpc.port).toBe(50051);
  expect(agent.livenessProbe.grpc.port).toBe(50051);
});

it('keeps the stateless components up through disruptions, and scales them', () => {
  for (const name of ['sandbox-gateway', 'sandbox-edge-proxy']) {
    const labels = find('Deployment', name).spec.selector.matchLabels;
    expect(find('PodDisruptionBudget', name).spec).toMatchObject({
      minAvailable: 1,
      selector: { matchLabels: labels },
    });
    expect(find('HorizontalPodAutoscaler', name).spec).toMatchObject({
      scaleTargetRef: { kind: 'Deployment', name },
      minReplicas: 2,
    });
    const service = find('Service', name).spec;
    expect(service.selector).toEqual(labels);
  }
});

it('runs gateway and edge unprivileged, and spells out what the agent gets', () => {
  for (const name of ['sandbox-gateway', 'sandbox-edge-proxy']) {
    const pod = find('Deployment', name).spec.template.spec;
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.hostNetwork).toBeUndefined();
    const [container] = pod.containers;
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
  }
  const agent = find('DaemonSet', 'sandbox-agent').spec.template.spec;
  expect(agent.automountServiceAccountToken).toBe(false);
  expect(agent.hostNetwork).toBe(true);
  expect(agent.nodeSelector).toEqual({ 'sandbox.dev/agent': 'true' });
  expect(agent.volumes.map((v: Doc) => v.hostPath.path).sort()).toEqual([
    '/dev',
    '/var/lib/sandbox-agent',
    '/var/run/docker.sock',
  ]);
});

it('denies all ingress to the namespace unless a policy lets it in', () => {
  const deny = find('NetworkPolicy', 'default-deny-ingress').spec;
  expect(deny).toEqual({ podSelector: {}, policyTypes: ['Ingress'] });
  const metrics = find('NetworkPolicy', 'metrics-from-monitoring').spec;
  expect(metrics.ingress[0].from[0].namespaceSelector).toBeDefined();
});

describe('deploy/compose', () => {
  const [compose] = yamlDocs(join(ROOT, 'compose', 'compose.yaml'));
  const shared = Object.fromEntries(
    readFileSync(join(ROOT, 'compose', 'example.env'), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  const env = (service: string): Record<string, string> => ({
    ...shared,
    ...(compose?.services[service].environment as Record<string, string>),
  });

  it('gives each component an environment its loader accepts', () => {
    for (const service of ['gateway', 'edge-proxy', 'agent-a', 'agent-b']) {
      for (const name of Object.keys(env(service))) {
        expect([service, name, KNOWN.has(name) || LIBRARY_ENV.test(name)]).toEqual([
          service,
          name,
          true,
        ]);
      }
    }
    expect(loadGatewayConfig(env('gateway')).agentNodes).toEqual([]);
    expect(loadEdgeProxyConfig(env('edge-proxy')).port).toBe(8081);
  });

  it('runs two distinct nodes on one machine: ids, ports and directories apart', () => {
    const [a, b] = ['agent-a', 'agent-b'].map((service) => loadAgentConfig(env(service)));
    expect(a?.nodeId).not.toBe(b?.nodeId);
    expect(a?.port).not.toBe(b?.port);
    expect(a?.previewPort).not.toBe(b?.previewPort);
    expect(a?.metrics.port).not.toBe(b?.metrics.port);
    expect(a?.workspaceDir).not.toBe(b?.workspaceDir);
    // Both keep sleeping workspaces in the one S3 store: each can wake the other's.
    expect(a?.blobStore).toEqual(b?.blobStore);
    expect(a?.blobStore.kind).toBe('s3');
  });
});
