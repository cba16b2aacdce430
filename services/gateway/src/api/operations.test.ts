import request from 'supertest';
import { z } from 'zod';
import { createLogger } from '@sandbox/logger';
import type { AccountStore, PrincipalCount } from '../accounts/account-store';
import { createApp, type AppDeps } from '../app';
import { ALL_SCOPES, type Principal } from '../auth/principal';
import { MemoryRateLimiter } from '../limits/memory-rate-limiter';
import { PAID_PLAN } from '../limits/plan-fixtures';
import { buildOpenApiDocument, openApiPath } from './openapi';
import { operations, type ApiOperation } from './operations';

/*
 * Documentation and validation come from the same operation table: for every operation, the
 * document shows the table's schemas, and requests that the DOCUMENTED schema refuses are
 * refused by the running app with 400 invalid_request naming the field. An operation whose
 * validation and documentation diverge fails here.
 */

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: unknown;
  enum?: unknown[];
  items?: JsonSchema;
  minLength?: number;
  minItems?: number;
  maximum?: number;
}

interface DocOperation {
  operationId: string;
  requestBody?: { content: { 'application/json': { schema: JsonSchema } } };
  parameters?: { name: string; in: string; required: boolean; schema: JsonSchema }[];
  responses: Record<string, { content?: Record<string, { 'x-event-data'?: unknown }> }>;
}

const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, DocOperation>> };
const table = Object.entries(operations) as [string, ApiOperation][];

const principal: Principal = {
  keyId: 'key_test',
  accountId: 'acc_test',
  plan: 'enterprise',
  scopes: ALL_SCOPES,
  limits: {
    ...PAID_PLAN,
    requestsPerMinute: 1_000_000,
    maxFileSizeBytes: 1024,
    maxFilesPerRequest: 10,
    maxEnvVars: 10,
    maxConcurrentSessions: 10,
    maxOutputLogBytes: 1048576,
  },
};
const KEY = `sk_live_${'a'.repeat(40)}`;

/** Any use of a service means a refused request got past validation. */
const unreachable = new Proxy(
  {},
  {
    get(_target, name) {
      throw new Error(`a refused request reached a service (${String(name)})`);
    },
  },
);

const app = createApp({
  ...(Object.fromEntries(
    [
      'sessionStore',
      'sessions',
      'sessionAccess',
      'idempotency',
      'execute',
      'files',
      'processes',
      'webhooks',
      'fleet',
    ].map((dep) => [dep, unreachable]),
  ) as Partial<AppDeps>),
  logger: createLogger({ name: 'test', level: 'silent' }),
  accounts: {
    findPrincipal: () => Promise.resolve(principal),
    admit: async (_key: string, count: PrincipalCount<unknown>) => ({
      principal,
      decision: await count.plain(principal),
    }),
    touchKey: () => Promise.resolve(),
  } as unknown as AccountStore,
  rateLimiter: new MemoryRateLimiter(),
  adminToken: undefined,
  internalToken: undefined,
  bodyLimitBytes: 1024 * 1024,
  sseKeepAliveMs: 15_000,
} as AppDeps);

function jsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
  });
  return rest as JsonSchema;
}

/** A value the documented schema accepts. */
function validValue(schema: JsonSchema): unknown {
  if (schema.enum !== undefined) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => validValue(schema.items ?? {}));
    case 'object':
      return validObject(schema);
    default:
      return 'x';
  }
}

/** An object with the required properties of `schema`, each valid. */
function validObject(schema: JsonSchema): Record<string, unknown> {
  return Object.fromEntries(
    (schema.required ?? []).map((name) => [name, validValue(schema.properties?.[name] ?? {})]),
  );
}

/** A value of the wrong type for `schema`; undefined when the schema takes anything. */
function wrongValue(schema: JsonSchema): unknown {
  if (schema.enum !== undefined) return '__none_of_these__';
  if (schema.type === undefined) return undefined;
  return schema.type === 'string' ? 12345 : 'x';
}

interface Refused {
  what: string;
  input: Record<string, unknown>;
  /** The field the answer must name, when it names one. */
  field?: string;
}

/** Inputs the documented object schema refuses, each from a valid one with one change. */
function refusedInputs(schema: JsonSchema, asQuery: boolean): Refused[] {
  const valid = validObject(schema);
  const refused: Refused[] = [];
  for (const name of schema.required ?? []) {
    const { [name]: _missing, ...input } = valid;
    refused.push({ what: `without ${name}`, input, field: name });
  }
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    // A query parameter is text: its wrong type is a repeated parameter (an array) or, for a
    // number, letters.
    const wrong = asQuery ? (property.type === 'integer' ? 'x' : ['x', 'y']) : wrongValue(property);
    if (wrong !== undefined) {
      refused.push({
        what: `${name} of the wrong type`,
        input: { ...valid, [name]: wrong },
        field: name,
      });
    }
    if (property.maximum !== undefined && property.maximum < Number.MAX_SAFE_INTEGER) {
      const tooBig = asQuery ? String(property.maximum + 1) : property.maximum + 1;
      refused.push({ what: `${name} too big`, input: { ...valid, [name]: tooBig }, field: name });
    }
  }
  if (schema.additionalProperties === false) {
    refused.push({ what: 'an unknown property', input: { ...valid, unknownProperty: 1 } });
  }
  return refused;
}

/** The query parameters of a documented operation as one object schema. */
function documentedQuery(operation: DocOperation): JsonSchema {
  const query = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query');
  return {
    type: 'object',
    properties: Object.fromEntries(query.map((parameter) => [parameter.name, parameter.schema])),
    required: query.filter((parameter) => parameter.required).map((parameter) => parameter.name),
  };
}

/** `{ a: ['x', 'y'] }` → `a=x&a=y` */
function queryString(input: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(input)) {
    for (const one of Array.isArray(value) ? value : [value]) params.append(name, String(one));
  }
  return params.toString();
}

function documented(op: ApiOperation): DocOperation {
  const operation = doc.paths[openApiPath(op.path)]?.[op.method];
  if (operation === undefined) throw new Error(`${op.method} ${op.path} is not documented`);
  return operation;
}

describe('the operation table drives both the document and validation', () => {
  it('documents exactly the operations of the table', () => {
    // This document, and the terminals' WebSocket (served by the upgrade handler), are not
    // operations of the table.
    const outside = ['/openapi.json', '/sessions/{sessionId}/terminals/{terminalId}/connect'];
    const listed = Object.entries(doc.paths)
      .filter(([path]) => !outside.includes(path))
      .flatMap(([path, methods]) =>
        Object.entries(methods).map(
          ([method, operation]) => `${method} ${path} ${operation.operationId}`,
        ),
      );
    const expected = table.map(([name, op]) => `${op.method} ${openApiPath(op.path)} ${name}`);
    expect(listed.sort()).toEqual(expected.sort());
  });

  it("documents a streamed run's events, a context cell's values and error among them", () => {
    const events = documented(operations.execute).responses['200']?.content?.['text/event-stream'];
    const types = JSON.stringify(events?.['x-event-data']);
    for (const type of ['started', 'cell_result', 'cell_error', 'exit']) {
      expect(types).toContain(`"const":"${type}"`);
    }
  });

  it.each(table)('%s: the document shows the schemas the validator uses', (_name, op) => {
    const operation = documented(op);
    expect(operation.requestBody?.content['application/json'].schema).toEqual(
      op.body === undefined ? undefined : jsonSchema(op.body),
    );
    const queryNames = Object.keys(
      op.query === undefined ? {} : (jsonSchema(op.query).properties ?? {}),
    );
    expect(Object.keys(documentedQuery(operation).properties ?? {})).toEqual(queryNames);
  });
});

describe('the operation table validates what it documents', () => {
  const validated = table.filter(([, op]) => op.body !== undefined || op.query !== undefined);

  it('covers every operation with a body or a query', () => {
    expect(validated.map(([name]) => name).sort()).toEqual(
      [
        'createContext',
        'createSession',
        'createSnapshot',
        'createTerminal',
        'createWebhook',
        'execute',
        'forkSession',
        'killProcesses',
        'listFiles',
        'listSessions',
        'listSnapshots',
        'makeDirectory',
        'processOutput',
        'readFile',
        'removeFile',
        'renameFile',
        'setEgress',
        'statFile',
        'watchFiles',
        'writeFile',
        'writeStdin',
      ].sort(),
    );
  });

  it.each(validated)('%s: refuses what its documented schema refuses', async (_name, op) => {
    const operation = documented(op);
    const path = op.path.replace(/:([A-Za-z]+)/g, 'x');
    const cases = [
      ...(op.body === undefined
        ? []
        : refusedInputs(operation.requestBody?.content['application/json'].schema ?? {}, false).map(
            (refused) => ({
              ...refused,
              send: () => request(app)[op.method](`/v1${path}`).send(refused.input),
            }),
          )),
      ...(op.query === undefined
        ? []
        : refusedInputs(documentedQuery(operation), true).map((refused) => ({
            ...refused,
            send: () => request(app)[op.method](`/v1${path}?${queryString(refused.input)}`),
          }))),
    ];
    expect(cases.length).toBeGreaterThan(0);
    for (const { what, field, send } of cases) {
      const response = await send().set('Authorization', `Bearer ${KEY}`);
      const error = (response.body as { error?: { code?: string; details?: { field?: string } } })
        .error;
      expect([what, response.status, error?.code]).toEqual([what, 400, 'invalid_request']);
      if (field !== undefined) expect([what, error?.details?.field]).toEqual([what, field]);
    }
  });
});
