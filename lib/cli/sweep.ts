import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { renderReportChart } from '../sweeps/report-chart.ts';
import { formatReportTable } from '../sweeps/report-table.ts';
import type { SweepReport } from '../sweeps/schemas.ts';
import { callForCli, collect, targetOptions, type TargetFlags } from './target.ts';

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

  targetOptions(
    sweep
      .command('start')
      .description('start (or resume) a sweep; without selections: the newest checkpoint of each model on every active suite, both modes')
      .option('--sweep-id <id>', 'the sweep id (default manual-<time>); an existing id resumes that sweep, and one that finished with failed shards retries them')
      .option('--checkpoint <id>', 'a checkpoint to sweep (repeatable)', collect, [])
      .option('--suite <id>', 'a suite to sweep (repeatable)', collect, [])
      .option('--mode <mode>', 'strict or lenient (repeatable; default both)', collect, [])
      .option('--attempts <n>', 'attempts per task (default: the stage setting)')
      .option('--json', 'print the API answer as JSON'),
  ).action(async (flags: StartFlags) => {
    const body = {
      ...(flags.sweepId ? { sweepId: flags.sweepId } : {}),
      ...(flags.checkpoint.length ? { checkpoints: flags.checkpoint } : {}),
      ...(flags.suite.length ? { suites: flags.suite } : {}),
      ...(flags.mode.length ? { modes: flags.mode } : {}),
      ...(flags.attempts ? { attemptsPerTask: Number(flags.attempts) } : {}),
    };
    const a = await callForCli<{ sweepId: string; checkpoints: string[]; suites: string[]; modes: string[] }>(flags, 'POST', '/v1/sweeps', body);
    if (a) {
      process.stdout.write(`sweep ${a.sweepId} started: ${a.checkpoints.length} checkpoint(s) × ${a.suites.length} suite(s) × ${a.modes.join('+')}\nfollow it: flywheel sweep status ${a.sweepId}\n`);
    }
  });

  targetOptions(sweep.command('status').description("a sweep's state, shards and execution").argument('<id>', 'sweep id').option('--json', 'print the report as JSON')).action(
    async (id: string, flags: TargetFlags & { json?: boolean }) => {
      const report = await fetchReport(flags, id);
      if (!report) return;
      if (flags.json) return void process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      const s = report.sweep;
      process.stdout.write(
        `sweep ${s.sweepId}: ${s.status}${report.execution ? ` (execution ${report.execution.status})` : ''}\n` +
          `requested ${s.requestedAt} by ${s.trigger}; ${s.checkpoints.length} checkpoint(s), ${s.suites.length} suite(s), ${s.modes.join('+')}\n` +
          `shards: ${s.shardCount ?? '?'} planned, ${s.succeededShards ?? 0} succeeded, ${s.failedShards ?? report.failedShards.length} failed; results so far: ${report.results.length}\n`,
      );
    },
  );

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
      writeFileSync(file, renderReportChart(report));
      process.stderr.write(`chart: ${file}\n`);
    }
  });
}
