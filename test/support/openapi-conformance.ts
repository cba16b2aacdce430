import Ajv2020 from 'ajv/dist/2020';
import WebSocket from 'ws';
import { call, type ApiResponse } from './api';

/** The served OpenAPI document, checked against what the gateway answers (openapi.test.ts). */

interface DocumentedResponse {
  headers?: Record<string, { $ref: string }>;
  content?: Record<string, { schema: object }>;
}

export interface OpenApiDoc {
  openapi: string;
  components: { headers: Record<string, { required?: boolean }> };
  paths: Record<string, Record<string, { responses: Record<string, DocumentedResponse> }>>;
}

/** The document's responses: each answer checked against its entry; remembers which were seen. */
export class DocumentedResponses {
  // Formats (date-time, uri) are not checked, as before: ajv knows none without ajv-formats,
  // and it ignored them with a warning per schema, thousands of lines in CI's log.
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  private readonly seen = new Set<string>();

  constructor(readonly doc: OpenApiDoc) {}

  /** Compiles every schema of the document (throws at the first that does not compile). */
  compileAll(): void {
    for (const methods of Object.values(this.doc.paths)) {
      for (const op of Object.values(methods)) {
        for (const response of Object.values(op.responses)) {
          for (const media of Object.values(response.content ?? {})) this.ajv.compile(media.schema);
        }
      }
    }
  }

  /** Asserts `response` is documented for `method path` and matches its schema. */
  check(method: string, path: string, response: ApiResponse<unknown>): void {
    const documented = this.doc.paths[path]?.[method]?.responses[String(response.status)];
    if (documented === undefined) {
      throw new Error(
        `${method} ${path} answered ${response.status}, undocumented: ${response.text}`,
      );
    }
    for (const [header, ref] of Object.entries(documented.headers ?? {})) {
      const name = ref.$ref.split('/').pop() as string;
      if (!this.doc.components.headers[name]?.required) continue;
      if (response.headers.get(header) === null) {
        throw new Error(
          `${method} ${path} ${response.status} lacks the documented header ${header}`,
        );
      }
    }
    if (documented.content === undefined) {
      // No body documented (204): none sent.
      expect(response.text).toBe('');
    } else if (documented.content['application/json'] !== undefined) {
      this.matchesSchema(`${method} ${path} ${response.status}`, documented, response);
    } // else raw bytes, or an event stream only
    this.saw(method, path, response.status);
  }

  /** Counts a response as seen that `check` cannot read (a WebSocket's 101). */
  saw(method: string, path: string, status: number): void {
    this.seen.add(`${method} ${path} ${status}`);
  }

  /** The documented (operation, status) pairs no answer was seen for, but the 500s. */
  unseen(): string[] {
    const unseen: string[] = [];
    for (const [path, methods] of Object.entries(this.doc.paths)) {
      if (path === '/openapi.json') continue;
      for (const [method, op] of Object.entries(methods)) {
        for (const status of Object.keys(op.responses)) {
          const entry = `${method} ${path} ${status}`;
          if (status !== '500' && !this.seen.has(entry)) unseen.push(entry);
        }
      }
    }
    return unseen;
  }

  private matchesSchema(
    what: string,
    documented: DocumentedResponse,
    response: ApiResponse<unknown>,
  ): void {
    const schema = documented.content?.['application/json']?.schema;
    if (schema === undefined) throw new Error(`${what} has no schema`);
    const validate = this.ajv.compile(schema);
    if (!validate(response.body)) {
      throw new Error(
        `${what} does not match: ${this.ajv.errorsText(validate.errors)}\n${response.text}`,
      );
    }
  }
}

/**
 * A WebSocket upgrade to `url`: 101 (closed again at once), or the refusal's status, headers
 * and JSON body, as an ApiResponse.
 */
export function upgrade(
  url: string,
  headers: Record<string, string> = {},
): Promise<ApiResponse<unknown>> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const answer = (status: number, raw: Record<string, unknown>, text: string) => {
      const fields = Object.entries(raw).map(([k, v]) => [k, String(v)] as [string, string]);
      resolve({
        status,
        headers: new Headers(fields),
        body: text === '' ? {} : JSON.parse(text),
        text,
      });
    };
    ws.once('upgrade', (res) => {
      answer(101, res.headers, '');
      ws.close();
    });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => answer(res.statusCode ?? 0, res.headers, text));
    });
    ws.once('error', reject);
  });
}

/** One request to every operation, as `key`, to the gateway at `url`. */
export function everyOperation(
  url: string,
  key: string,
): [string, string, () => Promise<ApiResponse<unknown>>][] {
  const id = `ses_${'3'.repeat(24)}`;
  const get = (path: string) => () => call(`${url}/v1${path}`, { key });
  const remove = (path: string) => () => call(`${url}/v1${path}`, { method: 'DELETE', key });
  const send = (path: string, body: unknown) => () =>
    call(`${url}/v1${path}`, { method: 'POST', key, body });
  const put = (path: string, body: unknown) => () =>
    call(`${url}/v1${path}`, { method: 'PUT', key, body });
  return [
    ['post', '/sessions/create', send('/sessions/create', {})],
    ['get', '/sessions', get('/sessions')],
    ['get', '/sessions/{sessionId}', get(`/sessions/${id}`)],
    ['delete', '/sessions/{sessionId}', remove(`/sessions/${id}`)],
    ['post', '/sessions/{sessionId}/fork', send(`/sessions/${id}/fork`, {})],
    ['get', '/sessions/{sessionId}/egress', get(`/sessions/${id}/egress`)],
    ['put', '/sessions/{sessionId}/egress', put(`/sessions/${id}/egress`, {})],
    ['post', '/execute', send('/execute', { sessionId: id, command: 'x' })],
    ['post', '/execution/kill', send('/execution/kill', { sessionId: id })],
    ['post', '/sessions/{sessionId}/terminals', send(`/sessions/${id}/terminals`, {})],
    ['post', '/sessions/{sessionId}/contexts', send(`/sessions/${id}/contexts`, {})],
    ['get', '/sessions/{sessionId}/contexts', get(`/sessions/${id}/contexts`)],
    [
      'delete',
      '/sessions/{sessionId}/contexts/{contextId}',
      remove(`/sessions/${id}/contexts/ctx_${'0'.repeat(24)}`),
    ],
    [
      'post',
      '/sessions/{sessionId}/contexts/{contextId}/restart',
      send(`/sessions/${id}/contexts/ctx_${'0'.repeat(24)}/restart`, undefined),
    ],
    ['get', '/sessions/{sessionId}/processes', get(`/sessions/${id}/processes`)],
    ['get', '/sessions/{sessionId}/processes/{pid}', get(`/sessions/${id}/processes/7`)],
    [
      'get',
      '/sessions/{sessionId}/processes/{pid}/output',
      get(`/sessions/${id}/processes/7/output`),
    ],
    [
      'post',
      '/sessions/{sessionId}/processes/{pid}/stdin',
      send(`/sessions/${id}/processes/7/stdin`, { data: 'x' }),
    ],
    ['post', '/files/write', send('/files/write', { sessionId: id, path: 'a', content: '' })],
    ['get', '/files/read', get(`/files/read?sessionId=${id}&path=a`)],
    ['get', '/files/list', get(`/files/list?sessionId=${id}`)],
    ['get', '/files/stat', get(`/files/stat?sessionId=${id}&path=a`)],
    ['post', '/files/remove', send('/files/remove', { sessionId: id, path: 'a' })],
    ['post', '/files/rename', send('/files/rename', { sessionId: id, from: 'a', to: 'b' })],
    ['post', '/files/mkdir', send('/files/mkdir', { sessionId: id, path: 'a' })],
    ['get', '/files/watch', get(`/files/watch?sessionId=${id}`)],
    ['post', '/webhooks', send('/webhooks', {})],
    ['get', '/webhooks', get('/webhooks')],
    ['delete', '/webhooks/{webhookId}', remove(`/webhooks/wh_${'0'.repeat(24)}`)],
    ['post', '/sessions/{sessionId}/snapshots', send(`/sessions/${id}/snapshots`, {})],
    ['get', '/snapshots', get('/snapshots')],
    ['get', '/snapshots/{snapshotId}', get(`/snapshots/snap_${'0'.repeat(24)}`)],
    ['delete', '/snapshots/{snapshotId}', remove(`/snapshots/snap_${'0'.repeat(24)}`)],
  ];
}
