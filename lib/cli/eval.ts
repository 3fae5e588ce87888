import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { openLocalPorts } from '../drivers/local/local-ports.ts';
import { harnessGrader } from '../harness/attempt/harness-grader.ts';
import { loadSuite } from '../harness/eval/load-suite.ts';
import { runEval, type EvalProgress, type EvalResults } from '../harness/eval/run-eval.ts';
import { NamespaceSandboxProvider } from '../harness/sandbox/namespace-sandbox.ts';
import type { HarnessMode } from '../harness/sandbox/sandbox.ts';
import { adaptiveConcurrency } from '../models/adaptive-concurrency.ts';
import { createModel } from '../models/create-model.ts';
import { table } from './feedback.ts';
import { dataDirFrom } from './target.ts';

interface EvalRunFlags {
  suite: string;
  model: string;
  mode: string;
  concurrency: string;
  attempts: string;
  runId?: string;
  dataDir?: string;
  maxTries: string;
  retryDelayMs: string;
  checkpoint?: string;
  json?: boolean;
}

function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a positive integer (got "${value}")`);
  return n;
}

function pct(v: number | null): string {
  return v === null ? '-' : `${(v * 100).toFixed(1)}%`;
}

/** One progress line per attempt event, e.g. `[3/10] calc/add #1 passed (4.2 s, 1,234 tokens)`. */
export function progressLine(event: EvalProgress): string {
  switch (event.type) {
    case 'skipped':
      return `[${event.done}/${event.total}] ${event.taskId} #${event.n} ${event.status} (already finished, skipped)`;
    case 'started':
      return `[${event.done}/${event.total}] ${event.taskId} #${event.n} started`;
    case 'try-failed':
      return `        ${event.taskId} #${event.n} try ${event.attempt.try}: infrastructure error (${event.attempt.infrastructureError?.phase}: ${event.attempt.infrastructureError?.message.split('\n')[0]})`;
    case 'finished': {
      const r = event.record;
      const tokens = r.usageAllTries.promptTokens + r.usageAllTries.completionTokens;
      const why = r.status === 'failed' && r.grade?.reasons?.[0] ? ` — ${r.grade.reasons[0]}` : '';
      return `[${event.done}/${event.total}] ${event.taskId} #${event.n} ${r.status}${why} (${(r.durationMs / 1000).toFixed(1)} s, ${tokens.toLocaleString('en-US')} tokens, ${r.tries} ${r.tries === 1 ? 'try' : 'tries'})`;
    }
  }
}

/** The summary table: one row per task, then the suite's totals. */
export function summaryTable(results: EvalResults): string {
  const k = results.passAtK.k;
  const rows = results.perTask.map((t) => [t.taskId, String(t.scored), String(t.passed), String(t.infrastructureErrors), String(t.ungraded), pct(t.passAt1), pct(t.passAtK)]);
  rows.push([
    `all (${results.tasks} tasks)`,
    String(results.counts.passed + results.counts.failed),
    String(results.counts.passed),
    String(results.counts['infrastructure-error']),
    String(results.counts.ungraded),
    pct(results.passAt1),
    pct(results.passAtK.value),
  ]);
  const lines = [
    table(['task', 'scored', 'passed', 'infra errors', 'ungraded', 'pass@1', `pass@${k}`], rows),
    `model ${results.model} · mode ${results.mode} · ${results.attemptsPerTask} attempt(s) per task · ran ${results.ran}, skipped ${results.skipped} (resumed)`,
    `tokens ${results.tokens.total.toLocaleString('en-US')} (prompt ${results.tokens.prompt.toLocaleString('en-US')}, completion ${results.tokens.completion.toLocaleString('en-US')}) · wall time ${(results.wallTimeMs / 1000).toFixed(1)} s · attempt time ${(results.attemptTimeMs / 1000).toFixed(1)} s`,
  ];
  if (results.counts['infrastructure-error'] > 0) {
    lines.push(`${results.counts['infrastructure-error']} attempt(s) ended in infrastructure errors: not scored; run again with --run-id ${results.runId} to retry them`);
  }
  return `${lines.join('\n')}\n`;
}

/** `flywheel eval run`: a suite × K attempts in one harness mode, locally, resumable by run id. */
export function registerEvalCommands(program: Command): void {
  const evalCommand = program.command('eval').description('evaluations: run a suite in the harness and score it');
  evalCommand
    .command('run')
    .description('run every task of a suite K times in the strict (or lenient) harness; resumes a run id where it stopped')
    .requiredOption('--suite <dir>', 'folder of task JSON files')
    .requiredOption('--model <spec>', 'openai:<model>@<baseUrl> or bedrock:<modelId>')
    .option('--mode <mode>', 'strict | lenient', 'strict')
    .option('--concurrency <n>', 'attempts at a time (model calls also adapt to rate limits)', '1')
    .option('--attempts <k>', 'attempts per task (the k of pass@k)', '1')
    .option('--run-id <id>', 'run id; an existing one resumes, skipping finished attempts (default: a new id)')
    .option('--data-dir <dir>', 'local data folder (env FLYWHEEL_DATA_DIR; default .flywheel/)')
    .option('--max-tries <n>', 'tries per attempt when infrastructure fails (sandbox, setup, model endpoint down)', '3')
    .option('--retry-delay-ms <ms>', 'base backoff between those tries', '2000')
    .option('--checkpoint <name>', 'the policy checkpoint under test, recorded in trajectories')
    .option('--json', 'print the results JSON instead of the table')
    .action(async (flags: EvalRunFlags) => {
      if (flags.mode !== 'strict' && flags.mode !== 'lenient') throw new Error(`--mode must be strict or lenient (got "${flags.mode}")`);
      const mode: HarnessMode = flags.mode;
      const concurrency = positiveInt(flags.concurrency, '--concurrency');
      const attempts = positiveInt(flags.attempts, '--attempts');
      const maxTries = positiveInt(flags.maxTries, '--max-tries');
      const retryDelayMs = Number(flags.retryDelayMs);
      if (!Number.isFinite(retryDelayMs) || retryDelayMs < 0) throw new Error('--retry-delay-ms must be a number >= 0');
      const runId = flags.runId ?? `eval-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(runId)) throw new Error(`--run-id: letters, digits, . _ - only (got "${runId}")`);
      const tasks = await loadSuite(flags.suite);
      const model = adaptiveConcurrency(createModel(flags.model), { initial: concurrency, max: concurrency });
      const provider = new NamespaceSandboxProvider();
      await provider.sweep();
      const dataDir = dataDirFrom(flags);
      const ports = openLocalPorts(dataDir);
      const log = (line: string) => process.stderr.write(`${line}\n`);
      try {
        log(`eval run ${runId}: ${tasks.length} task(s) × ${attempts} attempt(s), mode ${mode}, concurrency ${concurrency}, model ${model.id}`);
        const results = await runEval({
          runId,
          tasks,
          mode,
          attempts,
          concurrency,
          model,
          provider,
          ports,
          grade: harnessGrader({ provider, blobs: ports.blobs }),
          retry: { maxTries, baseDelayMs: retryDelayMs, maxDelayMs: Math.max(retryDelayMs, 60_000) },
          ...(flags.checkpoint ? { policy: { checkpoint: flags.checkpoint } } : {}),
          onProgress: (event) => log(progressLine(event)),
        });
        const dir = join(dataDir, 'evals', runId);
        await mkdir(dir, { recursive: true });
        const file = join(dir, `results-${mode}.json`);
        await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
        process.stdout.write(flags.json ? `${JSON.stringify(results, null, 2)}\n` : summaryTable(results));
        log(`results: ${file}`);
        // Exit 2: some attempts are still infrastructure errors, so the run is not complete; resume it.
        if (results.counts['infrastructure-error'] > 0) process.exitCode = 2;
      } finally {
        ports.close();
      }
    });
}
