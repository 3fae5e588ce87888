/**
 * The `jobs` table of `jobs.sqlite`: its DDL and the schema every read of it is decoded with, so a row is typed where
 * it is read and a malformed one names its column. One row per job; an array job has a parent row (`array_size`
 * set) and one leaf row per child (`<parent>:<index>`), and only leaves run.
 */
import { z } from 'zod';
import { COMPUTE_CATEGORIES, COMPUTE_POOLS, JOB_STATUSES } from '../../../ports/jobs.ts';
import { defineRowCodec, integerColumn, jsonColumn } from '../sqlite-rows.ts';

export const JOBS_DDL = `
CREATE TABLE IF NOT EXISTS jobs (
  job_id TEXT PRIMARY KEY,
  parent_id TEXT,
  array_index INTEGER,
  array_size INTEGER,
  name TEXT NOT NULL,
  definition TEXT NOT NULL,
  category TEXT NOT NULL,
  pool TEXT NOT NULL,
  spec TEXT NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL,
  status_reason TEXT,
  exit_code INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  runnable_at INTEGER,
  started_at INTEGER,
  stopped_at INTEGER,
  pid INTEGER,
  cancel_reason TEXT,
  idempotency_token TEXT UNIQUE
);
CREATE INDEX IF NOT EXISTS jobs_runnable ON jobs (pool, status, category, priority);
CREATE INDEX IF NOT EXISTS jobs_parent ON jobs (parent_id, array_index);
CREATE INDEX IF NOT EXISTS jobs_created ON jobs (created_at);
`;

/** Leaf rows (single jobs and array children): the rows that run. */
export const LEAF = 'array_size IS NULL';

const jobStatusColumn = z.enum(JOB_STATUSES);

/** What a submission asked of the process, kept as JSON in the `spec` column. */
const storedSpecSchema = z.object({
  command: z.array(z.string()).optional(),
  environment: z.record(z.string(), z.string()).optional(),
  timeoutSeconds: z.number().optional(),
});
export type StoredSpec = z.output<typeof storedSpecSchema>;

const optionalInteger = integerColumn.nullable();
const optionalText = z.string().nullable();

export const jobRow = defineRowCodec('jobs', {
  job_id: z.string(),
  parent_id: optionalText,
  array_index: optionalInteger,
  array_size: optionalInteger,
  name: z.string(),
  definition: z.string(),
  category: z.enum(COMPUTE_CATEGORIES),
  pool: z.enum(COMPUTE_POOLS),
  spec: jsonColumn(storedSpecSchema),
  priority: integerColumn,
  status: jobStatusColumn,
  status_reason: optionalText,
  exit_code: optionalInteger,
  attempts: integerColumn,
  max_attempts: integerColumn,
  created_at: integerColumn,
  runnable_at: optionalInteger,
  started_at: optionalInteger,
  stopped_at: optionalInteger,
  pid: optionalInteger,
  cancel_reason: optionalText,
});
export type JobRow = ReturnType<typeof jobRow.decode>;

/** `SELECT status, COUNT(*) AS n … GROUP BY status` over an array's children. */
export const statusCountRow = defineRowCodec('jobs', { status: jobStatusColumn, n: integerColumn });
export type StatusCount = ReturnType<typeof statusCountRow.decode>;
