import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { openLocalPorts } from '../drivers/local/local-ports.ts';
import { collect } from './target.ts';
import { calibrateDifficulty } from '../forge/calibrate-difficulty.ts';
import { forgeCandidateSource } from '../forge/find-forge-candidates.ts';
import { forgeRepository, type ForgeProgress, type ForgeRunResult } from '../forge/forge-repository.ts';
import { exportSuite, latestForgeRuns, listCandidateRecords } from '../forge/forge-records.ts';
import { planForge, type ForgePlan } from '../forge/plan/plan-forge.ts';
import { forgeReport, type ForgeReport, type SpreadRow } from '../forge/report/forge-report.ts';
import { recertifySuite } from '../forge/recertify-suite.ts';
import { parseForgeSpec, RUNNER_KINDS, type ForgeSpecInput } from '../forge/schemas.ts';
import { NamespaceSandboxProvider } from '../harness/sandbox/namespace-sandbox.ts';
import { createModel } from '../models/create-model.ts';
import { table } from './table.ts';
import { dataDirFrom } from './target.ts';

interface ForgeRunFlags {
  spec?: string;
  repo?: string;
  commit?: string;
  testCmd?: string;
  setupCmd?: string;
  runner?: string;
  filterCmd?: string;
  maxTasks?: string;
  maxCandidates?: string;
  suite?: string;
  split?: string;
  name?: string;
  k?: string;
  concurrency?: string;
  include?: string[];
  exclude?: string[];
  languages?: string[];
  canaries?: boolean;
  allow?: string[];
  statementModel?: string;
  seed?: string;
  dataDir?: string;
  json?: boolean;
}

function int(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a positive integer (got "${value}")`);
  return n;
}

function seedOf(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--seed must be a non-negative integer (got "${value}")`);
  return n;
}

/** The forge spec from `--spec <file>` (JSON) overlaid with the flags given. */
export async function specFromFlags(flags: ForgeRunFlags): Promise<ReturnType<typeof parseForgeSpec>> {
  const base = (flags.spec ? JSON.parse(await readFile(flags.spec, 'utf8')) : {}) as ForgeSpecInput;
  const repoArg = flags.repo;
  const isUrl = repoArg !== undefined && (/^[a-z][a-z0-9+.-]*:\/\//i.test(repoArg) || /^[^/]+@[^:]+:/.test(repoArg));
  const input: Record<string, unknown> = { ...base };
  if (repoArg !== undefined) input.repo = isUrl ? { kind: 'git', url: repoArg, ...(flags.commit ? { commit: flags.commit } : {}) } : { kind: 'local', path: resolve(repoArg), ...(flags.commit ? { commit: flags.commit } : {}) };
  if (flags.testCmd) input.testCommand = flags.testCmd;
  if (flags.setupCmd) input.setupCommand = flags.setupCmd;
  if (flags.runner || flags.filterCmd) input.runner = { ...(base.runner ?? {}), ...(flags.runner ? { kind: flags.runner } : {}), ...(flags.filterCmd ? { filterCommand: flags.filterCmd } : {}) };
  const n = { maxTasks: int(flags.maxTasks, '--max-tasks'), maxCandidates: int(flags.maxCandidates, '--max-candidates'), k: int(flags.k, '--k'), concurrency: int(flags.concurrency, '--concurrency') };
  for (const [k, v] of Object.entries(n)) if (v !== undefined) input[k] = v;
  if (flags.suite) input.suite = flags.suite;
  if (flags.split) input.split = flags.split;
  if (flags.name) input.name = flags.name;
  if (flags.include?.length) input.includePaths = flags.include;
  if (flags.exclude?.length) input.excludePaths = flags.exclude;
  if (flags.languages?.length) input.languages = flags.languages;
  if (flags.allow?.length) input.networkAllowList = flags.allow;
  if (flags.canaries) input.canaries = true;
  if (flags.seed !== undefined) input.seed = seedOf(flags.seed);
  return parseForgeSpec(input);
}

/** One progress line per forge event. */
export function forgeProgressLine(event: ForgeProgress): string {
  switch (event.type) {
    case 'runner':
      return [`test command: ${event.runner.testCommand} (${event.runner.kind})`, ...(event.runner.filterCommand ? [`first pass: ${event.runner.filterCommand}`] : []), ...event.runner.notes, ...(event.environment.id ? [`environment: ${event.environment.id}`] : []), ...event.environment.notes].join('\n');
    case 'baseline':
      return `baseline: ${event.baseline.runs} run(s), ${event.baseline.collected} tests, ${event.baseline.stable.length} stable, ${event.baseline.flaky.length} flaky (excluded), ${event.baseline.skipped.length} skipped`;
    case 'candidates':
      return `candidates: ${event.found} found, trying ${event.trying}${event.refused ? `, ${event.refused} refused before a run` : ''}`;
    case 'candidate':
      return `[${event.done}/${event.total}] ${event.candidateId}: ${event.verdict} (${(event.durationMs / 1000).toFixed(1)} s)`;
  }
}

export function forgeSummary(result: ForgeRunResult, suiteDir: string): string {
  const rows = Object.entries(result.counts).sort((a, b) => b[1] - a[1]).map(([verdict, n]) => [verdict, String(n)]);
  const tried = result.candidates.length;
  const hours = result.certifyMs / 3_600_000;
  return [
    table(['verdict', 'candidates'], rows),
    `run ${result.runId}: ${result.tasks.length} task(s) certified of ${tried} candidate(s) tried (${tried ? ((100 * result.tasks.length) / tried).toFixed(0) : 0}%), ${result.canaries.length} canary(ies); ` +
      `${hours > 0 ? (tried / hours).toFixed(0) : '-'} candidates/h, ${hours > 0 ? (result.tasks.length / hours).toFixed(0) : '-'} certified/h; wall ${(result.wallMs / 1000).toFixed(1)} s`,
    `suite ${result.suite}: ${suiteDir}  (run it: flywheel eval run --suite ${suiteDir} --model <spec>)`,
    `why candidates were rejected: flywheel forge rejections --run ${result.runId}`,
    `the spread (per file, strategy, failing share): flywheel forge report --run ${result.runId}`,
    '',
  ].join('\n');
}

/** Rows shown per table before "… N more" (the JSON output has them all). */
const MAX_ROWS = 40;

function capped(rows: string[][], columns: number): string[][] {
  if (rows.length <= MAX_ROWS) return rows;
  return [...rows.slice(0, MAX_ROWS), [`… ${rows.length - MAX_ROWS} more (--json for all)`, ...Array.from({ length: columns - 1 }, () => '')]];
}

function percent(x: number): string {
  return `${(100 * x).toFixed(0)}%`;
}

/**
 * `forge plan` as text: the resolved commands, the baseline, the test-to-source map, the first candidates, the
 * refusals and the estimate.
 *
 * @example
 * process.stdout.write(planText(await planForge({ spec, provider, candidates })));
 */
export function planText(plan: ForgePlan): string {
  const refusedBy = Object.entries(plan.candidates.refusedBy).map(([reason, n]) => `${reason} ${n}`).join(', ');
  const mapRows = Object.entries(plan.testMap).map(([file, tests]) => [file, tests.length ? tests.join(' ') : '-']);
  const out = [
    `test command: ${plan.runner.testCommand} (${plan.runner.kind})`,
    plan.runner.filterCommand ? `first pass:   ${plan.runner.filterCommand}` : 'first pass:   none (every candidate runs the whole suite)',
    ...plan.runner.notes.map((n) => `  ${n}`),
    `environment:  ${plan.environment.id ?? 'none resolved (the sandbox as it is)'}`,
    ...plan.environment.notes.map((n) => `  ${n}`),
    `baseline (1 run, ${plan.baseline.seconds.toFixed(1)} s): ${plan.baseline.tests} tests, ${plan.baseline.stable} stable, ${plan.baseline.flaky} flaky, ${plan.baseline.skipped} skipped; ${plan.baseline.collectedFiles.length} test file(s) collected`,
    '',
    'test files reaching each source file:',
    table(['source file', 'test files'], capped(mapRows, 2)),
    `candidates: ${plan.candidates.found} found, ${plan.candidates.toTry} to try (limit ${plan.candidates.limit}), ${plan.candidates.refused} refused before a run${refusedBy ? ` (${refusedBy})` : ''}`,
    table(
      ['#', 'entry point', 'strategy', 'tests', 'public', 'lines', 'difficulty', 'score'],
      plan.first.map((c) => [String(c.rank.position + 1), c.entryPoint, c.strategy, String(c.relatedTests.length), c.rank.isPublic ? 'yes' : 'no', c.rank.removedLines ? String(c.rank.removedLines) : '?', c.rank.difficulty.toFixed(2), c.rank.score.toFixed(2)]),
    ),
    ...(plan.refusedExamples.length ? ['refused before a run:', table(['candidate', 'reason', 'detail'], plan.refusedExamples.map((r) => [r.id, r.reason, r.detail]))] : []),
    `estimate: at most ${(plan.estimate.seconds / 60).toFixed(1)} min (${plan.estimate.suiteRuns} suite runs of ${plan.estimate.suiteSeconds.toFixed(1)} s): ${plan.estimate.note}`,
    `plan took ${(plan.wallMs / 1000).toFixed(1)} s; run it: flywheel forge run with the same flags`,
    '',
  ];
  return out.join('\n');
}

function spreadTable(title: string, column: string, rows: readonly SpreadRow[]): string {
  return `${title}\n${table([column, 'tried', 'certified', 'share'], capped(rows.map((r) => [r.key, String(r.tried), String(r.certified), r.tried ? percent(r.certified / r.tried) : '-']), 4))}`;
}

/**
 * `forge report` as text: counts, reasons, tasks per hour and the spread tables.
 *
 * @example
 * process.stdout.write(reportText(await forgeReport(ports.records, runId)));
 */
export function reportText(report: ForgeReport): string {
  // Bars at most 40 wide: a long run's buckets hold hundreds.
  const most = Math.max(1, ...report.spread.failingShare.map((r) => r.tried));
  const histogram = report.spread.failingShare.map((r) => [r.key, String(r.tried), String(r.certified), '#'.repeat(Math.ceil((40 * r.tried) / Math.max(40, most)))]);
  return [
    `run ${report.runId}: ${report.candidates} candidate(s), ${report.refused} refused before a run, ${report.tried} tried, ${report.certified} certified (${percent(report.certifiedShare)} of tried); ` +
      `${report.tasksPerHour === null ? '-' : report.tasksPerHour.toFixed(1)} tasks/h over ${(report.hours * 60).toFixed(1)} min of certification`,
    '',
    table(['verdict', 'candidates'], report.reasons.map((r) => [r.verdict, String(r.count)])),
    spreadTable('per file', 'file', report.spread.byFile),
    spreadTable('per directory', 'directory', report.spread.byDirectory),
    spreadTable('per strategy', 'strategy', report.spread.byStrategy),
    spreadTable('public vs private', 'entry point', report.spread.byVisibility),
    'share of the suite the deletion failed',
    table(['share', 'tried', 'certified', 'histogram (tried)'], histogram),
    ...(report.spread.failingShareUnmeasured ? [`${report.spread.failingShareUnmeasured} tried candidate(s) stopped before the full run (no share measured)`] : []),
    '',
  ].join('\n');
}

/** The namespace sandbox (unshare, mount, overlayfs) needs root: say so before a baseline fails obscurely. */
function sandboxProvider(): NamespaceSandboxProvider {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) throw new Error('the forge runs suites in the namespace sandbox, which needs root (or CAP_SYS_ADMIN): run it as root or in a privileged container');
  return new NamespaceSandboxProvider();
}

function suitePaths(dataDir: string, suite: string): { dir: string; reposDir: string } {
  return { dir: join(dataDir, 'forge', 'suites', suite), reposDir: join(dataDir, 'forge', 'repos', suite) };
}

/** The flags that make a forge spec, shared by `forge run` and `forge plan`. */
function specOptions(command: Command): Command {
  return command
    .option('--spec <file>', 'a forge spec JSON file (flags override its fields)')
    .option('--repo <path|url>', 'local checkout, plain folder, or git URL')
    .option('--commit <sha>', 'commit to forge from (default HEAD)')
    .option('--test-cmd <cmd>', 'the test command (default: derived from the repository; pytest is asked for JUnit automatically)')
    .option('--setup-cmd <cmd>', 'install/setup command, run in each sandbox before the tests')
    .option('--runner <kind>', `runner kind, for running only the tests that touch a deletion first: ${RUNNER_KINDS.join(' | ')}`)
    .option('--filter-cmd <cmd>', 'the test command for some files only, {files} standing for them (default: derived from the test command)')
    .option('--max-tasks <n>', 'stop after this many certified tasks', '10')
    .option('--max-candidates <n>', 'try at most this many candidates (default 20 x max tasks)')
    .option('--suite <name>', 'suite to register the tasks in', 'forge')
    .option('--split <split>', 'train | held-out', 'train')
    .option('--name <name>', 'repository name in task ids')
    .option('--k <n>', 'baseline and oracle runs', '3')
    .option('--concurrency <n>', 'candidates certified at once', '1')
    .option('--seed <n>', 'seed of the spread over the repository (same seed, same order of candidates)')
    .option('--include <path>', 'only candidates under this path (repeatable)', collect)
    .option('--exclude <path>', 'no candidates under this path (repeatable)', collect)
    .option('--languages <lang>', 'only these languages (repeatable)', collect)
    .option('--allow <host>', 'host the sandbox may reach, e.g. for the setup command (repeatable)', collect);
}

/** `flywheel forge …`: make certified tasks from a repository, re-certify a suite, see why candidates were rejected. */
export function registerForgeCommands(program: Command): void {
  const forge = program.command('forge').description('task forge: certified tasks made by deleting features from a repository whose tests pass');
  specOptions(
    forge.command('run').description('baseline the suite k times, then certify candidate deletions into a suite (records + blobs + a folder eval run loads)'),
  )
    .option('--canaries', 'also emit a canary per task (tests that contradict the statement)')
    .option('--statement-model <spec>', 'model that writes task statements and scores quality (default: template statements, unscored)')
    .option('--data-dir <dir>', 'local data folder (env FLYWHEEL_DATA_DIR; default .flywheel/)')
    .option('--json', 'print the result JSON')
    .action(async (flags: ForgeRunFlags) => {
      const spec = await specFromFlags(flags);
      const dataDir = dataDirFrom(flags);
      const ports = openLocalPorts(dataDir);
      const provider = sandboxProvider();
      await provider.sweep();
      const log = (line: string) => process.stderr.write(`${line}\n`);
      try {
        const candidates = forgeCandidateSource(flags.statementModel ? { model: createModel(flags.statementModel) } : {});
        const result = await forgeRepository({ spec, provider, ports, candidates, sourceCacheDir: join(dataDir, 'sources'), onProgress: (e) => log(forgeProgressLine(e)) });
        const paths = suitePaths(dataDir, spec.suite);
        await exportSuite(ports, { suite: spec.suite, ...paths });
        process.stdout.write(flags.json ? `${JSON.stringify({ ...result, suiteDir: paths.dir }, null, 2)}\n` : forgeSummary(result, paths.dir));
      } finally {
        ports.close();
      }
    });

  specOptions(forge.command('plan').description('dry run: resolve the runner, run the suite once, rank the candidates; show the test-to-source map, the first candidates and an estimate'))
    .option('--show <n>', 'candidates listed', '10')
    .option('--data-dir <dir>', 'local data folder (for the source cache)')
    .option('--json', 'print the plan JSON')
    .action(async (flags: ForgeRunFlags & { show: string }) => {
      const spec = await specFromFlags(flags);
      const provider = sandboxProvider();
      await provider.sweep();
      const plan = await planForge({ spec, provider, candidates: forgeCandidateSource(), sourceCacheDir: join(dataDirFrom(flags), 'sources'), show: int(flags.show, '--show') ?? 10 });
      process.stdout.write(flags.json ? `${JSON.stringify(plan, null, 2)}\n` : planText(plan));
    });

  forge
    .command('report')
    .description('what a forge run made: certified share, reasons, tasks/h, and the spread per file, directory, strategy and failing share (default: the latest run)')
    .option('--run <id>', 'forge run id')
    .option('--data-dir <dir>', 'local data folder')
    .option('--json', 'print JSON')
    .action(async (flags: { run?: string; dataDir?: string; json?: boolean }) => {
      const ports = openLocalPorts(dataDirFrom(flags));
      try {
        const runId = flags.run ?? (await latestForgeRuns(ports.records, 1))[0]?.runId;
        if (!runId) throw new Error('no forge run recorded in this data folder; run `flywheel forge run` first');
        const report = await forgeReport(ports.records, runId);
        process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : reportText(report));
      } finally {
        ports.close();
      }
    });

  forge
    .command('recertify')
    .description('check every active task of a suite again (do-nothing fails, reference passes k times); retire the ones that no longer hold')
    .requiredOption('--suite <name>', 'suite')
    .option('--task <id>', 'only this task (repeatable)', collect)
    .option('--k <n>', 'oracle runs', '3')
    .option('--data-dir <dir>', 'local data folder')
    .option('--json', 'print the outcomes JSON')
    .action(async (flags: { suite: string; task?: string[]; k: string; dataDir?: string; json?: boolean }) => {
      const dataDir = dataDirFrom(flags);
      const ports = openLocalPorts(dataDir);
      const provider = sandboxProvider();
      try {
        const outcomes = await recertifySuite({
          suite: flags.suite,
          provider,
          ports,
          k: int(flags.k, '--k') ?? 3,
          ...(flags.task?.length ? { taskIds: flags.task } : {}),
          onProgress: (o) => process.stderr.write(`${o.taskId}: ${o.result}${o.reason ? ` (${o.reason})` : ''}\n`),
        });
        await exportSuite(ports, { suite: flags.suite, ...suitePaths(dataDir, flags.suite) });
        if (flags.json) process.stdout.write(`${JSON.stringify(outcomes, null, 2)}\n`);
        else process.stdout.write(table(['task', 'result', 'reason'], outcomes.map((o) => [o.taskId, o.result, o.reason ?? ''])));
        if (outcomes.some((o) => o.reason?.startsWith('infrastructure-error'))) process.exitCode = 2;
      } finally {
        ports.close();
      }
    });

  forge
    .command('rejections')
    .description("every candidate of a forge run with its verdict and reason (default: the latest run)")
    .option('--run <id>', 'forge run id')
    .option('--all', 'certified ones too')
    .option('--data-dir <dir>', 'local data folder')
    .option('--json', 'print JSON')
    .action(async (flags: { run?: string; all?: boolean; dataDir?: string; json?: boolean }) => {
      const ports = openLocalPorts(dataDirFrom(flags));
      try {
        const runId = flags.run ?? (await latestForgeRuns(ports.records, 1))[0]?.runId;
        if (!runId) throw new Error('no forge run recorded in this data folder; run `flywheel forge run` first');
        const candidates = (await listCandidateRecords(ports.records, runId)).filter((c) => flags.all || c.status !== 'certified');
        if (flags.json) process.stdout.write(`${JSON.stringify(candidates, null, 2)}\n`);
        else {
          process.stdout.write(table(['candidate', 'strategy', 'verdict', 'detail'], candidates.map((c) => [c.candidateId, c.strategy, c.verdict, (c.detail ?? '').split('\n')[0]!])));
          process.stdout.write(`run ${runId}: ${candidates.length} candidate(s) shown; logs under blobs forge/runs/${runId}/candidates/\n`);
        }
      } finally {
        ports.close();
      }
    });

  forge
    .command('export')
    .description('write a suite as a folder of task JSON files (plus their repositories) that `flywheel eval run --suite` loads')
    .requiredOption('--suite <name>', 'suite')
    .option('--out <dir>', 'folder (default <data-dir>/forge/suites/<suite>)')
    .option('--data-dir <dir>', 'local data folder')
    .action(async (flags: { suite: string; out?: string; dataDir?: string }) => {
      const dataDir = dataDirFrom(flags);
      const ports = openLocalPorts(dataDir);
      try {
        const paths = flags.out ? { dir: resolve(flags.out), reposDir: join(resolve(flags.out), '..', `${flags.suite}-repos`) } : suitePaths(dataDir, flags.suite);
        const files = await exportSuite(ports, { suite: flags.suite, ...paths });
        process.stdout.write(`${files.length} task(s) written to ${paths.dir}\n`);
      } finally {
        ports.close();
      }
    });

  forge
    .command('calibrate')
    .description('difficulty: k rollouts of a model per task through the harness; store pass rates, mark the band and the too-easy')
    .requiredOption('--suite <name>', 'suite')
    .requiredOption('--model <spec>', 'openai:<model>@<baseUrl> or bedrock:<modelId>')
    .option('--k <n>', 'rollouts per task', '5')
    .option('--band <lo,hi>', 'pass-rate band worth training on', '0.1,0.7')
    .option('--concurrency <n>', 'rollouts at a time', '1')
    .option('--data-dir <dir>', 'local data folder')
    .action(async (flags: { suite: string; model: string; k: string; band: string; concurrency: string; dataDir?: string }) => {
      const band = flags.band.split(',').map(Number) as [number, number];
      if (band.length !== 2 || band.some((x) => !(x >= 0 && x <= 1)) || band[0] > band[1]) throw new Error(`--band must be lo,hi within 0..1 (got "${flags.band}")`);
      const ports = openLocalPorts(dataDirFrom(flags));
      try {
        const { outcomes } = await calibrateDifficulty({ suite: flags.suite, model: createModel(flags.model), provider: sandboxProvider(), ports, k: int(flags.k, '--k') ?? 5, band, concurrency: int(flags.concurrency, '--concurrency') ?? 1 });
        process.stdout.write(table(['task', 'scored', 'passed', 'pass rate', 'in band', 'too easy'], outcomes.map((o) => [o.taskId, String(o.scored), String(o.passed), o.passRate === null ? '-' : `${(o.passRate * 100).toFixed(1)}%`, String(o.inBand), String(o.tooEasy)])));
      } finally {
        ports.close();
      }
    });
}
