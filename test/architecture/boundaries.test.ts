/**
 * Proves that every rule of .dependency-cruiser.cjs fires: a small tree shaped like this repository is written to a
 * temporary folder, once clean and once with one violating file per rule, and cruised with the project's own rule set
 * through dependency-cruiser's API. Violating code is only ever written to the temporary folder.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { cruise, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const RULES_FILE = resolve(import.meta.dirname, '../../.dependency-cruiser.cjs');
const ROOTS = ['bin', 'lib', 'functions', 'batch-images', 'bench', 'test'];

type Tree = Record<string, string>;

/** A tree that keeps every rule: ports, drivers, two capabilities with adapters, the harness, roots and a test. */
const CLEAN_TREE: Tree = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      allowImportingTsExtensions: true,
      verbatimModuleSyntax: true,
      noEmit: true,
    },
  }),
  'node_modules/@aws-sdk/client-s3/package.json': JSON.stringify({ name: '@aws-sdk/client-s3', type: 'module', main: 'index.js' }),
  'node_modules/@aws-sdk/client-s3/index.js': 'export class S3Client {}\n',
  'lib/errors.ts': 'export class ValidationError extends Error {}\n',
  'lib/ports/blobs.ts': 'export interface BlobsPort { get(key: string): Promise<string> }\n',
  'lib/shared/field-issues.ts': 'export const toFieldIssues = (e: unknown) => [String(e)];\n',
  'lib/drivers/aws/s3-blobs.ts': [
    "import { S3Client } from '@aws-sdk/client-s3';",
    "import type { BlobsPort } from '../../ports/blobs.ts';",
    'export const s3Blobs = (): BlobsPort & { client: S3Client } => ({ client: new S3Client(), get: async (k) => k });',
  ].join('\n'),
  'lib/drivers/local/fs-blobs.ts': [
    "import type { BlobsPort } from '../../ports/blobs.ts';",
    'export const fsBlobs = (): BlobsPort => ({ get: async (k) => k });',
  ].join('\n'),
  'lib/api/route.ts': 'export interface Route { path: string }\n',
  'lib/feedback/ingest-feedback.ts': [
    "import type { BlobsPort } from '../ports/blobs.ts';",
    "import { toFieldIssues } from '../shared/field-issues.ts';",
    "import { ValidationError } from '../errors.ts';",
    'export const ingestFeedback = (blobs: BlobsPort) => [blobs, toFieldIssues(new ValidationError())];',
  ].join('\n'),
  'lib/feedback/http/post-feedback.ts': [
    "import type { Route } from '../../api/route.ts';",
    "import { ingestFeedback } from '../ingest-feedback.ts';",
    "export const postFeedback: Route & { run: typeof ingestFeedback } = { path: '/feedback', run: ingestFeedback };",
  ].join('\n'),
  'lib/feedback/infra/feedback-queue.ts': [
    "import { S3Client } from '@aws-sdk/client-s3';",
    "import { s3Blobs } from '../../drivers/aws/s3-blobs.ts';",
    'export const feedbackQueue = () => [new S3Client(), s3Blobs()];',
  ].join('\n'),
  'lib/feedback/local/local-feedback.ts': [
    "import { fsBlobs } from '../../drivers/local/fs-blobs.ts';",
    "import { ingestFeedback } from '../ingest-feedback.ts';",
    'export const localFeedback = () => ingestFeedback(fsBlobs());',
  ].join('\n'),
  'lib/modes/label-signal.ts': [
    "import { ingestFeedback } from '../feedback/ingest-feedback.ts';",
    'export const labelSignal = ingestFeedback;',
  ].join('\n'),
  'lib/harness/agent/run-agent.ts': 'export const runAgent = () => 1;\n',
  'lib/harness/agent/infra/agent-image.ts': 'export const agentImage = () => 2;\n',
  'lib/harness/agent/http/agent-status.ts': [
    "import { agentImage } from '../infra/agent-image.ts';",
    "import { runAgent } from '../run-agent.ts';",
    'export const agentStatus = () => [agentImage(), runAgent()];',
  ].join('\n'),
  'lib/harness/grading/grade.ts': [
    "import { runAgent } from '../agent/run-agent.ts';",
    'export const grade = () => runAgent();',
  ].join('\n'),
  'lib/api/routes.ts': [
    "import { postFeedback } from '../feedback/http/post-feedback.ts';",
    "import { agentStatus } from '../harness/agent/http/agent-status.ts';",
    'export const routes = [postFeedback, agentStatus];',
  ].join('\n'),
  'lib/local/queue-consumer.ts': 'export const consume = () => 3;\n',
  'lib/local/runtime.ts': [
    "import { localFeedback } from '../feedback/local/local-feedback.ts';",
    "import { consume } from './queue-consumer.ts';",
    'export const runtime = () => [localFeedback(), consume()];',
  ].join('\n'),
  'lib/stacks/pipeline-stack.ts': [
    "import { feedbackQueue } from '../feedback/infra/feedback-queue.ts';",
    'export const pipelineStack = () => feedbackQueue();',
  ].join('\n'),
  'functions/feedback/ingest.ts': [
    "import { S3Client } from '@aws-sdk/client-s3';",
    "import { s3Blobs } from '../../lib/drivers/aws/s3-blobs.ts';",
    "import { postFeedback } from '../../lib/feedback/http/post-feedback.ts';",
    'export const handler = () => [new S3Client(), s3Blobs(), postFeedback];',
  ].join('\n'),
  'bench/ingest.ts': [
    "import { runtime } from '../lib/local/runtime.ts';",
    "import { fsBlobs } from '../lib/drivers/local/fs-blobs.ts';",
    'export const bench = () => [runtime(), fsBlobs()];',
  ].join('\n'),
  'test/feedback/ingest.test.ts': [
    "import { S3Client } from '@aws-sdk/client-s3';",
    "import { feedbackQueue } from '../../lib/feedback/infra/feedback-queue.ts';",
    "import { runtime } from '../../lib/local/runtime.ts';",
    'export const fixture = [new S3Client(), feedbackQueue(), runtime()];',
  ].join('\n'),
};

interface Breach {
  /** The rule expected to report it. */
  rule: string;
  from: string;
  to: string;
}

/** One file per breach, each added to the clean tree, and the rules it must trip (its own and no other). */
const BREACHES: Array<{ name: string; files: Tree; expected: Breach[] }> = [
  {
    name: 'an import cycle, even through a type-only import',
    files: {
      'lib/feedback/schemas.ts': "import type { View } from './feedback-view.ts';\nexport type Schema = View;\nexport const KIND = 'f';\n",
      'lib/feedback/feedback-view.ts': "import { KIND } from './schemas.ts';\nexport type View = typeof KIND;\n",
    },
    // A cycle is reported once, from whichever of its files the cruise reached first.
    expected: [{ rule: 'no-circular', from: 'lib/feedback/feedback-view.ts', to: 'lib/feedback/schemas.ts' }],
  },
  {
    name: '@aws-sdk in a composition root that is not a function',
    files: { 'lib/cli/dlq.ts': "import { S3Client } from '@aws-sdk/client-s3';\nexport const dlq = new S3Client();\n" },
    expected: [{ rule: 'aws-sdk-only-in-drivers', from: 'lib/cli/dlq.ts', to: 'node_modules/@aws-sdk/client-s3/index.js' }],
  },
  {
    name: '@aws-sdk in a bench script',
    files: { 'bench/s3.ts': "import type { S3Client } from '@aws-sdk/client-s3';\nexport type Client = S3Client;\n" },
    expected: [{ rule: 'aws-sdk-only-in-drivers', from: 'bench/s3.ts', to: 'node_modules/@aws-sdk/client-s3/index.js' }],
  },
  {
    name: 'a use case that imports the HTTP shell',
    files: { 'lib/modes/list-modes.ts': "import type { Route } from '../api/route.ts';\nexport type R = Route;\n" },
    expected: [{ rule: 'use-cases-not-api-or-drivers', from: 'lib/modes/list-modes.ts', to: 'lib/api/route.ts' }],
  },
  {
    name: 'a use case that imports a driver',
    files: { 'lib/modes/write-label.ts': "import { fsBlobs } from '../drivers/local/fs-blobs.ts';\nexport const w = fsBlobs;\n" },
    expected: [
      { rule: 'use-cases-not-api-or-drivers', from: 'lib/modes/write-label.ts', to: 'lib/drivers/local/fs-blobs.ts' },
      { rule: 'drivers-only-from-wiring', from: 'lib/modes/write-label.ts', to: 'lib/drivers/local/fs-blobs.ts' },
    ],
  },
  {
    name: "a capability's infra that imports another capability's infra",
    files: {
      'lib/modes/infra/modes-queue.ts':
        "import { feedbackQueue } from '../../feedback/infra/feedback-queue.ts';\nexport const q = feedbackQueue;\n",
    },
    expected: [
      { rule: 'adapters-private-to-capability', from: 'lib/modes/infra/modes-queue.ts', to: 'lib/feedback/infra/feedback-queue.ts' },
    ],
  },
  {
    name: "one harness part that imports another harness part's adapter",
    files: {
      'lib/harness/grading/grade-image.ts':
        "import { agentImage } from '../agent/infra/agent-image.ts';\nexport const g = agentImage;\n",
    },
    expected: [
      { rule: 'adapters-private-to-capability', from: 'lib/harness/grading/grade-image.ts', to: 'lib/harness/agent/infra/agent-image.ts' },
    ],
  },
  {
    name: "a capability's http/ that imports another capability's http/",
    files: {
      'lib/modes/http/operations.ts':
        "import { postFeedback } from '../../feedback/http/post-feedback.ts';\nexport const o = postFeedback;\n",
    },
    expected: [
      { rule: 'http-adapters-private-to-capability', from: 'lib/modes/http/operations.ts', to: 'lib/feedback/http/post-feedback.ts' },
    ],
  },
  {
    name: 'a consumer that imports a driver',
    files: {
      'lib/feedback/consumers/process-feedback.ts':
        "import { s3Blobs } from '../../drivers/aws/s3-blobs.ts';\nexport const p = s3Blobs;\n",
    },
    expected: [
      { rule: 'drivers-only-from-wiring', from: 'lib/feedback/consumers/process-feedback.ts', to: 'lib/drivers/aws/s3-blobs.ts' },
    ],
  },
  {
    name: 'a capability that imports a composition root',
    files: {
      'lib/modes/local/local-modes.ts': "import { consume } from '../../local/queue-consumer.ts';\nexport const m = consume;\n",
    },
    expected: [
      { rule: 'composition-roots-are-leaves', from: 'lib/modes/local/local-modes.ts', to: 'lib/local/queue-consumer.ts' },
    ],
  },
];

const scratch = mkdtempSync(join(tmpdir(), 'flywheel-boundaries-'));

function writeTree(dir: string, tree: Tree): void {
  for (const [path, text] of Object.entries(tree)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** Cruises a tree with the project's rule set and returns what it reports, as rule, from and to. */
async function violationsOf(name: string, tree: Tree): Promise<Breach[]> {
  const dir = join(scratch, name);
  writeTree(dir, tree);
  const { ruleSet, ...options } = await extractDepcruiseOptions(RULES_FILE);
  const tsConfigFile = join(dir, 'tsconfig.json');
  const roots = ROOTS.filter((root) => Object.keys(tree).some((path) => path.startsWith(`${root}/`)));
  const result = await cruise(
    roots,
    { ...options, ruleSet, validate: true, baseDir: dir, tsConfig: { fileName: tsConfigFile } },
    {},
    { tsConfig: extractTSConfig(tsConfigFile) },
  );
  if (typeof result.output === 'string') throw new Error('dependency-cruiser returned a report, not a result');
  return result.output.summary.violations.map((v: IViolation) => ({ rule: v.rule.name, from: v.from, to: v.to }));
}

/** Sorted, with a cycle's two ends in name order: which end a cycle is reported from is not part of the rule. */
const sortBreaches = (breaches: Breach[]) =>
  breaches
    .map((b) => (b.rule === 'no-circular' && b.to < b.from ? { ...b, from: b.to, to: b.from } : b))
    .sort((a, b) => `${a.rule} ${a.from} ${a.to}`.localeCompare(`${b.rule} ${b.from} ${b.to}`));

describe('the dependency rules (.dependency-cruiser.cjs)', () => {
  let reported: Breach[] = [];

  beforeAll(async () => {
    // Every breach at once in one tree: one cruise instead of one per rule.
    const tree = Object.assign({}, CLEAN_TREE, ...BREACHES.map((breach) => breach.files));
    reported = await violationsOf('all-breaches', tree);
  }, 60_000);

  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('report nothing on a tree that keeps them', async () => {
    expect(await violationsOf('clean', CLEAN_TREE)).toEqual([]);
  }, 60_000);

  it.each(BREACHES)('report $name', ({ files, expected }) => {
    const fromThese = reported.filter((breach) => breach.from in files);
    expect(sortBreaches(fromThese)).toEqual(sortBreaches(expected));
  });

  it('report nothing else than the breaches', () => {
    const breachFiles = new Set(BREACHES.flatMap((breach) => Object.keys(breach.files)));
    expect(reported.filter((breach) => !breachFiles.has(breach.from))).toEqual([]);
  });

  it('name every rule of the rule set in some breach', async () => {
    const { ruleSet } = await extractDepcruiseOptions(RULES_FILE);
    const names = (ruleSet?.forbidden ?? []).map((rule) => rule.name ?? '');
    const proved = new Set(BREACHES.flatMap((breach) => breach.expected.map((e) => e.rule)));
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => !proved.has(name))).toEqual([]);
  });
});
