import { z } from 'zod';
import { errorCodeTable, type ErrorCode } from '@sandbox/errors';
import { COMMON_ERRORS, operations, type ApiOperation } from './operations';
import { errorBodySchema } from './schemas';

type JsonSchema = Record<string, unknown>;

/** An event stream's media type: text, its events' data (`x-event-data`) when known. */
function eventStream(op: ApiOperation): Record<string, unknown> {
  const events = op.success.eventStream;
  if (events === true || events === undefined) return { schema: { type: 'string' } };
  const data = jsonSchema(events, 'output');
  return {
    schema: { type: 'string', description: data.description },
    'x-event-data': data,
  };
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' });
  return rest;
}

/** `/sessions/:sessionId` → `/sessions/{sessionId}` */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z]+)/g, '{$1}');
}

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
};

/** Headers of a response of `op` with `status`. */
function responseHeaders(op: ApiOperation, status: number): Record<string, unknown> {
  return {
    'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
    // Authentication comes before rate limiting: a 401 has no budget to report, nor has a 503
    // whose cause is the rate limiter's store out of reach.
    ...(op.scope !== undefined && status !== 401 && status !== 503 ? RATE_LIMIT_HEADERS : {}),
    ...(status === 429 || status === 503
      ? { 'Retry-After': { $ref: '#/components/headers/Retry-After' } }
      : {}),
    ...(op.idempotent && status === 200
      ? { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } }
      : {}),
  };
}

function header(description: string, type: 'string' | 'integer', required = false) {
  return { description, ...(required ? { required } : {}), schema: { type } };
}

const COMPONENT_HEADERS = {
  'X-Request-Id': header(
    "The caller's X-Request-Id when printable ASCII of at most 200 characters, else a new id",
    'string',
    true,
  ),
  'X-RateLimit-Limit': header('Requests per minute of this key', 'integer', true),
  'X-RateLimit-Remaining': header(
    'Requests left in the sliding one-minute window',
    'integer',
    true,
  ),
  'X-RateLimit-Reset': header(
    'Unix time (seconds) at which the whole budget is available again',
    'integer',
    true,
  ),
  'Retry-After': header(
    'Seconds to wait before retrying: on 429 rate_limit_exceeded and on 503',
    'integer',
  ),
  'Idempotent-Replayed': header(
    '"true" when this is the stored response of an earlier request with the same Idempotency-Key',
    'string',
  ),
};

/** Every error `op` can answer with. */
export function errorCodes(op: ApiOperation): ErrorCode[] {
  return [
    ...new Set<ErrorCode>([
      ...(op.body === undefined && op.query === undefined ? [] : ['invalid_request' as const]),
      ...(op.scope === undefined ? [] : ['forbidden' as const]),
      ...op.errors,
      ...COMMON_ERRORS,
    ]),
  ];
}

function errorResponses(op: ApiOperation): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodes(op)) {
    if (code === 'rate_limit_exceeded' && op.scope === undefined) continue;
    const status = errorCodeTable[code].httpStatus;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, unknown> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: codes.join(', '),
      headers: responseHeaders(op, status),
      content: {
        'application/json': {
          schema: jsonSchema(errorBodySchema(codes as [ErrorCode, ...ErrorCode[]]), 'output'),
        },
      },
    };
  }
  return responses;
}

function queryParameters(op: ApiOperation): unknown[] {
  if (op.query === undefined) return [];
  const schema = jsonSchema(op.query, 'input') as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  const shape = op.query instanceof z.ZodObject ? op.query.shape : {};
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    // An integer parameter arrives as text; its digits-only pattern is the parser's business.
    const { pattern, ...rest } = property;
    const field: unknown = shape[name];
    const fallback = field instanceof z.ZodDefault ? field.def.defaultValue : undefined;
    return {
      name,
      in: 'query',
      required: schema.required?.includes(name) ?? false,
      schema: {
        ...(rest.type === 'integer' ? rest : property),
        ...(fallback === undefined ? {} : { default: fallback }),
      },
    };
  });
}

function operationObject(operationId: string, op: ApiOperation): Record<string, unknown> {
  const parameters = [
    ...[...op.path.matchAll(/:([A-Za-z]+)/g)].map((match) => ({
      name: match[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    })),
    ...queryParameters(op),
    ...(op.resumable === true
      ? [
          {
            name: 'Last-Event-ID',
            in: 'header',
            required: false,
            description:
              "An event stream's reconnect: the id of the last event received (`<processId>:<stdout>:<stderr>`); the stream goes on right after it",
            schema: { type: 'string' },
          },
        ]
      : []),
    ...(op.idempotent
      ? [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description: 'Retries with the same key within 24 h return the original response',
            schema: { type: 'string', minLength: 1, maxLength: 255 },
          },
        ]
      : []),
  ];
  const success: Record<string, unknown> = op.success.raw
    ? { '*/*': { schema: { type: 'string', format: 'binary' } } }
    : op.success.streamOnly
      ? {}
      : { 'application/json': { schema: jsonSchema(op.success.schema, 'output') } };
  if (op.success.eventStream !== undefined) success['text/event-stream'] = eventStream(op);
  return {
    operationId,
    summary: op.summary,
    ...(op.scope === undefined ? { security: [] } : { 'x-required-scope': op.scope }),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(op.body === undefined
      ? {}
      : {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: jsonSchema(op.body, 'input') } },
          },
        }),
    responses: {
      [String(op.success.status)]: {
        description: op.success.description,
        headers: responseHeaders(op, op.success.status),
        content: success,
      },
      ...(op.resumable === true
        ? {
            '204': {
              description:
                'Last-Event-ID named the last event of a complete stream: nothing follows',
              headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
            },
          }
        : {}),
      ...errorResponses(op),
    },
  };
}

/**
 * What opening a terminal can answer instead of 101: a plain request (400), no or a bad key or
 * token (401), a key without `execute` (403), no such terminal or session (404), the node or
 * the database out of reach (503).
 */
function terminalConnectErrors(): Record<string, unknown> {
  const byStatus: Record<number, [ErrorCode, ...ErrorCode[]]> = {
    400: ['invalid_request'],
    401: ['unauthorized'],
    403: ['forbidden'],
    404: ['not_found', 'session_not_found'],
    503: ['service_unavailable'],
  };
  return Object.fromEntries(
    Object.entries(byStatus).map(([status, codes]) => [
      status,
      {
        description: codes.join(', '),
        headers: {
          'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
          ...(status === '503'
            ? { 'Retry-After': { $ref: '#/components/headers/Retry-After' } }
            : {}),
        },
        content: { 'application/json': { schema: jsonSchema(errorBodySchema(codes), 'output') } },
      },
    ]),
  );
}

/** The OpenAPI 3.1 document of the public API, built from the schemas that validate it. */
export function buildOpenApiDocument(serverUrl = '/v1'): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [operationId, op] of Object.entries(operations) as [string, ApiOperation][]) {
    const path = openApiPath(op.path);
    paths[path] = { ...paths[path], [op.method]: operationObject(operationId, op) };
  }
  paths['/sessions/{sessionId}/terminals/{terminalId}/connect'] = {
    get: {
      operationId: 'connectTerminal',
      summary:
        'Open a terminal made by createTerminal, once: a WebSocket. Binary messages carry the ' +
        'terminal\'s bytes both ways; the client sends {"type":"resize","cols","rows"} as ' +
        'text; the server sends {"type":"started","pid"}, {"type":"exit","exitCode"} and ' +
        '{"type":"error","error"} as text, then closes. The session stays active while it is open.',
      security: [{ bearerAuth: [] }, {}],
      parameters: [
        { name: 'sessionId', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'terminalId', in: 'path', required: true, schema: { type: 'string' } },
        {
          name: 'token',
          in: 'query',
          required: false,
          description: "The terminal's single-use token, instead of the API key (browsers)",
          schema: { type: 'string' },
        },
      ],
      responses: {
        '101': {
          description: 'Switching Protocols: the WebSocket is open',
          headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
        },
        ...terminalConnectErrors(),
      },
    },
  };
  paths['/openapi.json'] = {
    get: {
      operationId: 'getOpenApiDocument',
      summary: 'This document',
      security: [],
      responses: {
        '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: {} } } },
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Sandbox service API',
      version: '1.0.0',
      description:
        'Isolated sessions that run code and commands. Every error has the body ' +
        '{"error":{"code","message","details"}}. A request that matches no operation gets 404 ' +
        'not_found, with or without a key.',
    },
    servers: [{ url: serverUrl }],
    security: [{ bearerAuth: [] }],
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'sk_live_…' },
      },
      headers: COMPONENT_HEADERS,
    },
    paths,
  };
}
