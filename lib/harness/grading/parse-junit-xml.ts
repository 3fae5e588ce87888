/**
 * JUnit XML, the report most runners can write (pytest `--junitxml`, Maven Surefire, jest-junit, gotestsum,
 * vitest's junit reporter). Nested `<testsuites>`/`<testsuite>` are walked; each `<testcase>` is one test:
 * `<error>` → error, `<failure>` → failed, `<skipped>` → skipped, none of these → passed. Flaky-rerun elements
 * (`<flakyFailure>`, `<rerunFailure>`) do not change the outcome.
 */
import { XMLParser } from 'fast-xml-parser';
import { ValidationError } from '../../errors.ts';
import { junitCaseId } from './test-id.ts';
import { firstLine, type ReportedTest, type TestReport } from './test-report.ts';

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  // Always arrays, so one suite or one case reads the same as many.
  isArray: (name) => ['testsuites', 'testsuite', 'testcase', 'failure', 'error', 'skipped'].includes(name),
  parseAttributeValue: false,
  parseTagValue: false,
  trimValues: false,
  htmlEntities: false,
});

type Node = Record<string, unknown>;

function asNodes(v: unknown): Node[] {
  if (!Array.isArray(v)) return [];
  return v.map((x) => (x !== null && typeof x === 'object' ? (x as Node) : { '#text': String(x) }));
}

function messageOf(nodes: Node[]): string | undefined {
  const n = nodes[0];
  if (!n) return undefined;
  const m = n['message'];
  return firstLine(typeof m === 'string' && m.trim() !== '' ? m : typeof n['#text'] === 'string' ? n['#text'] : undefined);
}

function walk(node: Node, out: ReportedTest[]): void {
  for (const suite of [...asNodes(node['testsuites']), ...asNodes(node['testsuite'])]) walk(suite, out);
  for (const tc of asNodes(node['testcase'])) {
    const name = typeof tc['name'] === 'string' ? tc['name'] : '';
    const classname = typeof tc['classname'] === 'string' ? tc['classname'] : undefined;
    const file = typeof tc['file'] === 'string' ? tc['file'] : undefined;
    const errors = asNodes(tc['error']);
    const failures = asNodes(tc['failure']);
    const skipped = asNodes(tc['skipped']);
    const outcome = errors.length > 0 ? 'error' : failures.length > 0 ? 'failed' : skipped.length > 0 ? 'skipped' : 'passed';
    const message = messageOf(errors.length > 0 ? errors : failures.length > 0 ? failures : skipped);
    out.push({
      id: junitCaseId({ name, ...(classname !== undefined ? { classname } : {}), ...(file !== undefined ? { file } : {}) }),
      outcome,
      ...(message !== undefined ? { message } : {}),
    });
  }
}

/**
 * Parses a JUnit XML report; throws `Flywheel.ValidationError` when the text is not XML with a testsuite in it.
 *
 * @example
 * const report = parseJunitXml(await readFile('reports/pytest.xml', 'utf8'), 'pytest.xml');
 */
export function parseJunitXml(xml: string, source = 'junit.xml'): TestReport {
  let doc: Node;
  try {
    doc = parser.parse(xml) as Node;
  } catch (error) {
    throw new ValidationError(`${source} is not XML: ${(error as Error).message}`);
  }
  if (!('testsuites' in doc) && !('testsuite' in doc)) throw new ValidationError(`${source} has no <testsuites> or <testsuite>`);
  const tests: ReportedTest[] = [];
  walk(doc, tests);
  return { format: 'junit-xml', source, tests };
}
