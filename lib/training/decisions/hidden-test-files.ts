/**
 * The hidden tests of a task whose tests are files rather than a test patch (a Harbor task: `testFiles` under its
 * folder's `tests/`, no `testPatch`), read by content so the leakage check can compare hints against them — as the
 * integrity check compares an agent's diff against `testFileContents`. A file that cannot be read makes the secrets
 * `unavailable`: the check fails closed instead of passing a hint it could not compare.
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute, join, normalize, sep } from 'node:path';

/** Reads one hidden test file of a task (its path as the task lists it); undefined: not readable. */
export type ReadTestFile = (task: Record<string, unknown>, path: string) => Promise<string | undefined>;

/** Bytes of one hidden test file read at most (larger: unreadable, the secrets unavailable). */
export const MAX_TEST_FILE_BYTES = 4 * 1024 * 1024;

/**
 * Reads a Harbor task's test file from its folder (`origin: { kind: 'harbor', ref: <folder> }`), never outside it.
 *
 * @example
 * await readHarborTestFile({ origin: { kind: 'harbor', ref: '/tasks/fix-csv' } }, 'tests/test_outputs.py');
 */
export const readHarborTestFile: ReadTestFile = async (task, path) => {
  const origin = task['origin'] as { kind?: unknown; ref?: unknown } | undefined;
  if (origin?.kind !== 'harbor' || typeof origin.ref !== 'string' || !isAbsolute(origin.ref)) return undefined;
  const root = normalize(origin.ref);
  const file = normalize(join(root, path));
  if (!file.startsWith(root.endsWith(sep) ? root : `${root}${sep}`)) return undefined;
  try {
    const bytes = await readFile(file);
    return bytes.byteLength <= MAX_TEST_FILE_BYTES ? bytes.toString('utf8') : undefined;
  } catch {
    return undefined;
  }
};

/**
 * The contents of a task's hidden test files when they are files (none needed: `{ contents: {} }`), or why not.
 *
 * @example
 * const files = await readHiddenTestFiles(task); // { contents: { 'tests/test_outputs.py': '…' } } | { unavailable: '…' }
 */
export async function readHiddenTestFiles(task: Record<string, unknown>, read: ReadTestFile = readHarborTestFile): Promise<{ contents: Record<string, string> } | { unavailable: string }> {
  const files = Array.isArray(task['testFiles']) ? task['testFiles'].filter((f): f is string => typeof f === 'string') : [];
  if (files.length === 0 || typeof task['testPatch'] === 'string') return { contents: {} };
  const contents: Record<string, string> = {};
  const missing: string[] = [];
  for (const path of files) {
    const text = await read(task, path);
    if (text === undefined) missing.push(path);
    else contents[path] = text;
  }
  if (missing.length > 0) return { unavailable: `the task's hidden test files cannot be read (${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}): hints cannot be checked against them` };
  return { contents };
}
