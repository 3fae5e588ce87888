/**
 * The names a training run gives to what it starts: its workflow execution (`<runId>`, `<runId>-r<n>` after the n-th
 * resume) and its policy job (`train-<runId>`): both as their services allow, and the same every time for one run.
 *
 * @example
 * trainingExecutionName('rl-42', 0); // 'rl-42'
 * trainingExecutionName('rl-42', 2); // 'rl-42-r2'
 * policyJobName('org/run:1');        // 'train-org-run-1-<8 hex>'
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../shared/canonical-json.ts';
import { executionNameFor } from '../../shared/execution-name.ts';

/** What a requested run id may be: no `/` (a blob key's path), short enough for its resumes' execution names. */
export const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,71}$/;
/** How a resume's execution name ends (`<runId>-r<n>`): refused at the end of a run id, so names never collide. */
export const RESUME_SUFFIX = /-r\d+$/;

/** Step Functions execution names: 1–80 of these. */
const EXECUTION_NAME = /^[A-Za-z0-9_-]{1,72}$/;
/** Batch job names: letters, digits, `-` and `_`, at most 128. */
const JOB_NAME_MAX = 128;

/** The run's execution name: the run id itself when it is one (at most 72, leaving room for `-r<n>`), else derived from it. */
export function trainingExecutionName(runId: string, resumes = 0): string {
  const base = EXECUTION_NAME.test(runId) ? runId : executionNameFor('train', runId, 58);
  return resumes > 0 ? `${base}-r${resumes}` : base;
}

/** The policy job's Batch name: `train-<runId as letters, digits, ->-<8 hex of the id>` (one per run). */
export function policyJobName(runId: string): string {
  return executionNameFor('train', runId, JOB_NAME_MAX - 20);
}

/**
 * The run id of a request without one: `train-<base slug>-<12 hex of the request>`, so the same request sent twice
 * names one run (a client's retry), and two requests differ.
 */
export function derivedRunId(request: unknown, base: string): string {
  const slug = base.replace(/[^A-Za-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  const hash = createHash('sha256').update(canonicalJson(request)).digest('hex').slice(0, 12);
  return `train-${slug ? `${slug}-` : ''}${hash}`;
}
