import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { renderReportChart } from '../sweeps/report-chart.ts';
import { formatReportTable } from '../sweeps/report-table.ts';
import type { SweepReport } from '../sweeps/schemas.ts';
import type { SweepProgress } from '../sweeps/sweep-progress-schema.ts';
import { formatShardTable, formatSweepProgress, nextPollMs, shardChangeLines, sweepEnded, sweepFailed, sweepHeadline } from './sweep-progress.ts';
import { callForCli, collect, fieldFlags, targetHint, targetOptions, type TargetFlags } from './target.ts';

interface StartFlags extends TargetFlags {
  sweepId?: string;
  checkpoint: string[];
  suite: string[];
  mode: string[];
  attempts?: string;
  json?: boolean;
}

interface ReportFlags extends TargetFlags {
  png?: string;
  chart: boolean;
  json?: boolean;
}


/** Each shard's progress, or undefined after an error answer was printed (exit 1). */
async function fetchProgress(flags: TargetFlags, id: string): Promise<SweepProgress | undefined> {
  return callForCli<SweepProgress>({ ...flags, json: false }, 'GET', `/v1/sweeps/${encodeURIComponent(id)}/shards`);
}

/**
 * `sweep status --watch`: polls the report and the shards (backing off while nothing changes) until the sweep ends;
 * on a terminal redraws the shard table in place, else prints a line per shard change. Exit 1 when it failed.
 */
async function watchSweep(flags: TargetFlags, id: string): Promise<void> {
  const tty = process.stdout.isTTY === true;
  const seen = new Map<string, string>();
  let drawn = 0;
  let wait = 500;
  let lastHeadline = '';
  for (;;) {
    const report = await fetchReport(flags, id);
    if (!report) return;
    const progress = await fetchProgress(flags, id);
    if (!progress) return;
    let changed: boolean;
    if (tty) {
      const text = formatSweepProgress(report, progress);
      // Move up over the last drawing and clear it, then draw again.
      if (drawn > 0) process.stdout.write(`\x1b[${drawn}F\x1b[J`);
      process.stdout.write(text);
      drawn = text.split('\n').length - 1;
      changed = text !== lastHeadline;
      lastHeadline = text;
    } else {
      const lines = shardChangeLines(seen, progress);
      const headline = sweepHeadline(report, progress);
      if (headline !== lastHeadline) lines.unshift(headline);
      lastHeadline = headline;
      for (const line of lines) process.stdout.write(`${line}\n`);
      changed = lines.length > 0;
    }
    if (sweepEnded(report)) {
      const failed = sweepFailed(report);
      const hint = targetHint(flags);
      process.stdout.write(failed ? `sweep ${id} ended ${report.sweep.status}: see flywheel sweep report ${id}${hint}\n` : `sweep ${id} succeeded: flywheel results --sweep ${id}${hint}\n`);
      if (failed) process.exitCode = 1;
      return;
    }
    wait = nextPollMs(wait, changed);
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/** The report, or undefined after an error answer was printed (exit 1); `--json` is the caller's to print. */
async function fetchReport(flags: TargetFlags, id: string): Promise<SweepReport | undefined> {
  return callForCli<SweepReport>({ ...flags, json: false }, 'GET', `/v1/sweeps/${encodeURIComponent(id)}`);
}

/**
 * `flywheel sweep start|status|report`: start a sweep (through `POST /v1/sweeps`, so the local runtime's or a
 * deployed stage's state machine runs it), follow it, and report it as a table and a PNG chart.
 */
export function registerSweepCommands(program: Command): void {
  const sweep = program.command('sweep').description('eval sweeps: every checkpoint on every suite, strict and lenient');

  const start = targetOptions(
    sweep
      .command('start')
      .description('start (or resume) a sweep; without selections: the newest checkpoint of each model on every active suite, both modes')
      .option('--sweep-id <id>', 'the sweep id (default manual-<time>); an existing id resumes that sweep, and one that finished with failed shards retries them')
      .option('--checkpoint <id>', 'a checkpoint to sweep (repeatable)', collect, [])
      .option('--suite <id>', 'a suite to sweep (repeatable)', collect, [])
      .option('--mode <mode>', 'strict or lenient (repeatable; default both)', collect, [])
      .option('--attempts <n>', 'attempts per task (default: the stage setting)')
      .option('--json', 'print the API answer as JSON'),
  );
  fieldFlags(start, { checkpoints: '--checkpoint', suites: '--suite', modes: '--mode', attemptsPerTask: '--attempts' });
  start.action(async (flags: StartFlags) => {
    const body = {
      ...(flags.sweepId ? { sweepId: flags.sweepId } : {}),
      ...(flags.checkpoint.length ? { checkpoints: flags.checkpoint } : {}),
      ...(flags.suite.length ? { suites: flags.suite } : {}),
      ...(flags.mode.length ? { modes: flags.mode } : {}),
      ...(flags.attempts ? { attemptsPerTask: Number(flags.attempts) } : {}),
    };
    const a = await callForCli<{ sweepId: string; checkpoints: string[]; suites: string[]; modes: string[] }>(flags, 'POST', '/v1/sweeps', body);
    if (a) {
      process.stdout.write(`sweep ${a.sweepId} started: ${a.checkpoints.length} checkpoint(s) × ${a.suites.length} suite(s) × ${a.modes.join('+')}\nfollow it: flywheel sweep status ${a.sweepId} --watch${targetHint(flags)}\n`);
    }
  });

  targetOptions(
    sweep
      .command('status')
      .description("a sweep's state and each shard's progress (status, tasks done/total, elapsed); --watch redraws it until the sweep ends")
      .argument('<id>', 'sweep id')
      .option('--watch', 'follow it until it ends (exit 1 when it failed); plain lines when stdout is not a terminal')
      .option('--json', 'print the report as JSON'),
  ).action(async (id: string, flags: TargetFlags & { json?: boolean; watch?: boolean }) => {
    if (flags.watch) return watchSweep(flags, id);
    const report = await fetchReport(flags, id);
    if (!report) return;
    if (flags.json) return void process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    const progress = await fetchProgress(flags, id);
    if (!progress) return;
    const s = report.sweep;
    process.stdout.write(
      `sweep ${s.sweepId}: ${s.status}${report.execution ? ` (execution ${report.execution.status})` : ''}\n` +
        `requested ${s.requestedAt} by ${s.trigger}; ${s.checkpoints.length} checkpoint(s), ${s.suites.length} suite(s), ${s.modes.join('+')}\n` +
        `shards: ${s.shardCount ?? '?'} planned, ${s.succeededShards ?? 0} succeeded, ${s.failedShards ?? report.failedShards.length} failed; results so far: ${report.results.length}\n` +
        (progress.planned ? formatShardTable(progress.shards) : 'not planned yet\n'),
    );
  });

  targetOptions(
    sweep
      .command('report')
      .description('table and PNG chart of score per checkpoint per suite, strict beside lenient, with 95% CIs')
      .argument('<id>', 'sweep id')
      .option('--png <file>', 'where to write the chart (default sweep-<id>.png)')
      .option('--no-chart', 'table only')
      .option('--json', 'print the report as JSON'),
  ).action(async (id: string, flags: ReportFlags) => {
    const report = await fetchReport(flags, id);
    if (!report) return;
    if (flags.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else process.stdout.write(formatReportTable(report));
    if (flags.chart) {
      const file = resolve(flags.png ?? `sweep-${id}.png`);
      writeFileSync(file, await renderReportChart(report));
      process.stderr.write(`chart: ${file}\n`);
    }
  });
}
