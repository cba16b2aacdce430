import { z } from 'zod';
import { SNAPSHOT_ID_PATTERN } from '@sandbox/contract';
import { createSnapshotBody } from '../routes/snapshots/snapshot-routes';
import { paginationQuery } from '../routes/sessions/list-sessions';
import type { ApiOperation } from './api-operation';
import { deletedSchema, isoTimestamp, paginationSchema } from './schemas';

/** A snapshot of a session's workspace (ADR 44). */
export const snapshotSchema = z.strictObject({
  snapshotId: z.string().regex(SNAPSHOT_ID_PATTERN),
  sessionId: z.string().describe('the session it was taken from (it may be gone since)'),
  name: z.string().nullable(),
  sizeBytes: z.number().int().min(0).describe('bytes it takes in the blob store'),
  processesKept: z
    .boolean()
    .describe('false: files only (the default runtime cannot keep processes)'),
  createdAt: isoTimestamp,
});

const snapshotListSchema = z.strictObject({
  data: z.array(snapshotSchema),
  pagination: paginationSchema,
});

const deletedSnapshotSchema = deletedSchema('snapshotId');

/** The snapshot operations of the operation table (operations.ts spreads them in). */
export const snapshotOperations = {
  createSnapshot: {
    method: 'post',
    path: '/sessions/:sessionId/snapshots',
    summary:
      "Snapshot a session's files into the blob store (the session runs on; it is frozen only while its files are packed)",
    scope: 'sessions',
    body: createSnapshotBody,
    idempotent: true,
    success: { status: 201, schema: snapshotSchema, description: 'The snapshot, stored' },
    errors: ['session_not_found', 'snapshot_quota_exceeded', 'service_unavailable'],
  },
  listSnapshots: {
    method: 'get',
    path: '/snapshots',
    summary: "List the account's snapshots, newest first",
    scope: 'sessions',
    query: paginationQuery,
    success: { status: 200, schema: snapshotListSchema, description: 'One page of snapshots' },
    errors: [],
  },
  getSnapshot: {
    method: 'get',
    path: '/snapshots/:snapshotId',
    summary: 'One snapshot',
    scope: 'sessions',
    success: { status: 200, schema: snapshotSchema, description: 'The snapshot' },
    errors: ['snapshot_not_found'],
  },
  deleteSnapshot: {
    method: 'delete',
    path: '/snapshots/:snapshotId',
    summary: 'Delete a snapshot and its stored files',
    scope: 'sessions',
    success: { status: 200, schema: deletedSnapshotSchema, description: 'Deleted' },
    errors: ['snapshot_not_found'],
  },
} as const satisfies Record<string, ApiOperation>;
