/**
 * Which file each reported test lives in, so a later run can be filtered to those files: from the id where the
 * notation carries it (pytest `path.py::name`, vitest/jest `path > describe > name`), else from the `file` attribute
 * of JUnit `<testcase>` elements (node's runner, jest-junit), made relative to the run's workdir.
 */
import { XMLParser } from 'fast-xml-parser';
import { isAbsolute, relative } from 'node:path';
import type { ReportFile } from '../harness/grading/read-test-reports.ts';
import { junitCaseId, testIdKey } from '../harness/grading/test-id.ts';

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  isArray: (name) => ['testsuites', 'testsuite', 'testcase'].includes(name),
  parseAttributeValue: false,
  parseTagValue: false,
});

type Node = Record<string, unknown>;

function walk(node: Node, out: Map<string, string>, workdir: string | undefined): void {
  for (const key of ['testsuites', 'testsuite'] as const) {
    const v = node[key];
    if (Array.isArray(v)) for (const child of v) if (child && typeof child === 'object') walk(child as Node, out, workdir);
  }
  const cases = node['testcase'];
  if (!Array.isArray(cases)) return;
  for (const tc of cases as Node[]) {
    const name = typeof tc['name'] === 'string' ? tc['name'] : '';
    const classname = typeof tc['classname'] === 'string' ? tc['classname'] : undefined;
    const rawFile = typeof tc['file'] === 'string' ? tc['file'] : undefined;
    if (!rawFile) continue;
    const file = workdir && isAbsolute(rawFile) && rawFile.startsWith(`${workdir}/`) ? relative(workdir, rawFile) : rawFile;
    if (isAbsolute(file) || file.startsWith('..')) continue;
    out.set(testIdKey(junitCaseId({ name, ...(classname !== undefined ? { classname } : {}), file: rawFile })), file);
  }
}

/**
 * The file of a test id from its notation alone, when it carries one: the id's first part (before the first `::` or
 * ` > `), when that is a Python file before `::` or a JS/TS file (vitest/jest JSON ` > `, vitest JUnit `::`). Titles after it never count, whatever they hold.
 *
 * @example
 * fileFromId('src/url.test.ts > withHttp > keeps a.b/c.ts'); // 'src/url.test.ts'
 */
export function fileFromId(id: string): string | undefined {
  const sep = /::| > /.exec(id);
  if (!sep) return undefined;
  const first = id.slice(0, sep.index).trim();
  if (first === '' || (sep[0] === '::' && /\s/.test(first))) return undefined;
  if (sep[0] === '::' && /\.py$/.test(first)) return first;
  // JS test files: vitest/jest JSON (`file > title`) and JUnit (`file::title`, the classname vitest's junit reporter writes).
  if (/\.[cm]?[jt]sx?$/.test(first) && (sep[0] === ' > ' || !/\s/.test(first))) return first;
  return undefined;
}

/** Test-id key → file, from the JUnit reports of a run (ids that carry their file need no entry). */
export function testFileMap(reports: readonly ReportFile[], workdir?: string): Map<string, string> {
  const byKey = new Map<string, string>();
  for (const r of reports) {
    if (!r.content.trimStart().startsWith('<')) continue;
    try {
      walk(parser.parse(r.content) as Node, byKey, workdir);
    } catch {
      /* not XML we can read: ids may still carry files */
    }
  }
  return byKey;
}

/**
 * Files of the given test ids; `undefined` when some id's file cannot be told (the caller then runs everything).
 * `known` adds files learnt earlier (the baseline's reports, where a test that now fails to load was still listed).
 *
 * @example
 * const files = testFilesOf(run.files, task.failToPass, session.workdir); // ['test/calc.test.ts']
 */
export function testFilesOf(reports: readonly ReportFile[], ids: readonly string[], workdir?: string, known: Readonly<Record<string, string>> = {}): string[] | undefined {
  const byKey = testFileMap(reports, workdir);
  const files = new Set<string>();
  for (const id of ids) {
    const file = fileFromId(id) ?? byKey.get(testIdKey(id)) ?? known[testIdKey(id)];
    if (!file) return undefined;
    files.add(file);
  }
  return [...files].sort();
}
