/**
 * Checks a job submission against the rules both drivers share (Batch's own rules, so a job that runs locally is one
 * Batch accepts): name pattern, category and pool, array size 2–10,000, retries 0–9 (Batch allows 1–10 attempts),
 * scheduling priority 0–9999, a positive timeout. Throws a ValidationError naming every offending field.
 */
import { ValidationError } from '../errors.ts';
import { COMPUTE_CATEGORIES, COMPUTE_POOLS, type JobSubmission } from '../ports/jobs.ts';

/** Batch job names: up to 128 letters, digits, hyphens and underscores, starting with a letter or digit. */
export const JOB_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** A container image reference as Batch takes it (`public.ecr.aws/x/y:tag`, `swebench/sweb.eval.x86_64.a_1776_b:latest`, `name@sha256:…`). */
export const IMAGE_REFERENCE = /^[a-z0-9][a-z0-9._\-/:@]{0,254}$/i;

export function validateJobSubmission(submission: JobSubmission, knownDefinitions?: readonly string[]): void {
  const issues: Array<{ path: string; message: string }> = [];
  const s = submission;
  if (typeof s.name !== 'string' || !JOB_NAME_PATTERN.test(s.name)) issues.push({ path: 'name', message: 'up to 128 letters, digits, - and _, starting with a letter or digit' });
  if (typeof s.definition !== 'string' || s.definition === '') issues.push({ path: 'definition', message: 'required' });
  else if (knownDefinitions && !knownDefinitions.includes(s.definition)) issues.push({ path: 'definition', message: `unknown job definition (known: ${knownDefinitions.join(', ') || 'none'})` });
  if (!COMPUTE_CATEGORIES.includes(s.category)) issues.push({ path: 'category', message: `one of ${COMPUTE_CATEGORIES.join(', ')}` });
  if (!COMPUTE_POOLS.includes(s.pool)) issues.push({ path: 'pool', message: `one of ${COMPUTE_POOLS.join(', ')}` });
  if (s.arraySize !== undefined && (!Number.isInteger(s.arraySize) || s.arraySize < 1 || s.arraySize > 10_000 || s.arraySize === 0)) issues.push({ path: 'arraySize', message: '1 (a single job) or 2–10,000' });
  if (s.timeoutSeconds !== undefined && (!Number.isFinite(s.timeoutSeconds) || s.timeoutSeconds <= 0)) issues.push({ path: 'timeoutSeconds', message: 'a positive number' });
  if (s.retries !== undefined && (!Number.isInteger(s.retries) || s.retries < 0 || s.retries > 9)) issues.push({ path: 'retries', message: 'an integer 0–9' });
  if (s.schedulingPriority !== undefined && (!Number.isInteger(s.schedulingPriority) || s.schedulingPriority < 0 || s.schedulingPriority > 9999)) issues.push({ path: 'schedulingPriority', message: 'an integer 0–9999' });
  if (s.idempotencyToken !== undefined && (typeof s.idempotencyToken !== 'string' || s.idempotencyToken.length < 1 || s.idempotencyToken.length > 512)) issues.push({ path: 'idempotencyToken', message: '1–512 characters' });
  for (const [key, value] of Object.entries(s.environment ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) || key.startsWith('AWS_BATCH')) issues.push({ path: `environment.${key}`, message: 'a variable name, not starting with AWS_BATCH (Batch reserves those)' });
    if (typeof value !== 'string') issues.push({ path: `environment.${key}`, message: 'a string' });
  }
  if (s.image !== undefined && (typeof s.image !== 'string' || !IMAGE_REFERENCE.test(s.image))) issues.push({ path: 'image', message: 'a container image reference (registry/name:tag or name@sha256:…), up to 255 characters' });
  if (s.command !== undefined && (!Array.isArray(s.command) || s.command.some((a) => typeof a !== 'string'))) issues.push({ path: 'command', message: 'an array of strings' });
  if (issues.length > 0) throw new ValidationError(`invalid job submission: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
}
