import { z } from 'zod';
import { ValidationError } from '../../errors.ts';
import { parseTask, type Task } from './task-schema.ts';

/**
 * A SWE-bench instance (princeton-nlp/SWE-bench, SWE-bench Verified, SWE-Gym and SWE-smith share the fields).
 * FAIL_TO_PASS / PASS_TO_PASS arrive as JSON-encoded strings in the Hugging Face export, or as arrays.
 */
const TestList = z.union([z.array(z.string()), z.string().transform((s, ctx) => {
  try {
    const v = JSON.parse(s) as unknown;
    if (Array.isArray(v) && v.every((x): x is string => typeof x === 'string')) return v;
  } catch {
    /* reported below */
  }
  ctx.addIssue({ code: 'custom', message: 'a JSON array of test ids' });
  return z.NEVER;
})]);

export const SweBenchInstanceSchema = z.object({
  instance_id: z.string().min(1),
  repo: z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'owner/name'),
  base_commit: z.string().regex(/^[0-9a-f]{7,40}$/),
  problem_statement: z.string().min(1),
  FAIL_TO_PASS: TestList,
  PASS_TO_PASS: TestList.default([]),
  test_patch: z.string().default(''),
  patch: z.string().optional(),
  hints_text: z.string().optional(),
  version: z.string().optional(),
  environment_setup_commit: z.string().optional(),
  created_at: z.string().optional(),
});
export type SweBenchInstance = z.input<typeof SweBenchInstanceSchema>;

/**
 * The SWE-bench harness's per-instance evaluation image: `swebench/sweb.eval.x86_64.<instance id>:latest`, with `__`
 * written `_1776_` (Docker repository names allow no double underscore) and lower case.
 *
 * @example
 * sweBenchImage('django__django-11099') // 'swebench/sweb.eval.x86_64.django_1776_django-11099:latest'
 */
export function sweBenchImage(instanceId: string, template = 'swebench/sweb.eval.x86_64.{id}:latest'): string {
  return template.replace('{id}', instanceId.replaceAll('__', '_1776_')).toLowerCase();
}

/** Paths a unified diff touches (`+++ b/<path>` lines). */
export function pathsInPatch(patch: string): string[] {
  const paths = new Set<string>();
  for (const m of patch.matchAll(/^diff --git a\/(\S+) b\/(\S+)$/gm)) paths.add(m[2]!);
  return [...paths];
}

/**
 * Imports one SWE-bench instance as a Task: repo from GitHub at base_commit, the problem statement as the
 * instruction, the test patch's files as the files to revert at grading. The test command defaults to pytest over
 * those files (override per repository with `options.testCommand`). The task's environment image is SWE-bench's
 * per-instance image (`sweBenchImage`; `options.image` another template, or false).
 *
 * @example
 * const task = importSweBenchInstance(row, { suite: 'swe-bench-verified' });
 */
export function importSweBenchInstance(
  input: unknown,
  options: {
    suite?: string;
    split?: 'train' | 'held-out';
    visibility?: 'public' | 'private';
    testCommand?: string;
    gitBaseUrl?: string;
    /** The instance's environment image: a template with `{id}` (default SWE-bench's), or false for none. */
    image?: string | false;
  } = {},
): Task {
  const parsed = SweBenchInstanceSchema.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
    throw new ValidationError(`not a SWE-bench instance: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  }
  const row = parsed.data;
  const testFiles = pathsInPatch(row.test_patch);
  return parseTask({
    schemaVersion: 1,
    id: row.instance_id,
    suite: options.suite ?? 'swe-bench',
    split: options.split ?? 'held-out',
    visibility: options.visibility ?? 'public',
    repo: { kind: 'git', url: `${options.gitBaseUrl ?? 'https://github.com'}/${row.repo}.git`, commit: row.base_commit },
    instruction: row.problem_statement,
    testCommand: options.testCommand ?? `python -m pytest -rA ${testFiles.join(' ')}`.trim(),
    failToPass: row.FAIL_TO_PASS,
    passToPass: row.PASS_TO_PASS,
    testFiles,
    ...(row.test_patch ? { testPatch: row.test_patch } : {}),
    ...(row.patch ? { goldPatch: row.patch } : {}),
    ...(options.image === false ? {} : { environment: { image: sweBenchImage(row.instance_id, options.image) } }),
    origin: { kind: 'swe-bench', ref: row.instance_id },
    metadata: {
      repo: row.repo,
      ...(row.version ? { version: row.version } : {}),
      ...(row.environment_setup_commit ? { environmentSetupCommit: row.environment_setup_commit } : {}),
      ...(row.created_at ? { createdAt: row.created_at } : {}),
      ...(row.hints_text ? { hints: row.hints_text } : {}),
    },
  }, row.instance_id);
}
