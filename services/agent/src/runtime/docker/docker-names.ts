/** Names and labels of the Docker objects the agent owns, derived from the session id. */
export function containerName(sessionId: string): string {
  return `sbx-${sessionId}`;
}

export function workspaceVolumeName(sessionId: string): string {
  return `sbx-ws-${sessionId}`;
}

export interface SandboxLabels {
  managed: string;
  session: string;
  account: string;
  node: string;
}

export function sandboxLabelKeys(prefix: string): SandboxLabels {
  return {
    managed: `${prefix}.managed`,
    session: `${prefix}.session`,
    account: `${prefix}.account`,
    node: `${prefix}.node`,
  };
}

/** The HTTP status of a failed Docker Engine API call (404 missing, 409 conflict...). */
export function statusCode(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null && 'statusCode' in err
    ? (err as { statusCode?: number }).statusCode
    : undefined;
}
