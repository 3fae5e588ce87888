import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { table } from './table.ts';
import { callForCli, resolveTarget, targetOptions, type JsonFlags } from './target.ts';
import { cellText } from './format.ts';

interface RunFlags extends JsonFlags {
  base: string;
  run?: string[];
  steps?: string;
  decisionWeight?: string;
  outcomeWeight?: string;
  loraRank?: string;
  runId?: string;
  checkpoint?: string;
}

interface CurvesFlags extends JsonFlags {
  png?: string;
}

type Row = Record<string, unknown>;
/** A value as cell text: numbers rounded, lists and objects as plain text (no JSON in human output). */
const s = (v: unknown) => cellText(v);
const runPath = (runId: string) => `/v1/training-runs/${encodeURIComponent(runId)}`;

function trainOptions(command: Command): Command {
  return targetOptions(command).option('--json', 'print the raw JSON answer');
}

/** A number flag, or an error naming the flag. */
function numberFlag(name: string, text: string | undefined, integer: boolean): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n))) throw new Error(`--${name} takes ${integer ? 'an integer' : 'a number'}, not ${JSON.stringify(text)}`);
  return n;
}

/** How long ago `iso` was, in the largest whole unit (`42s`, `5m`, `3h`, `2d`); empty when unknown. */
export function ageOf(iso: unknown, now = Date.now()): string {
  if (typeof iso !== 'string') return '';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (!Number.isFinite(seconds)) return '';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/** `step/steps` of a run (the steps it was asked for). */
function progress(run: Row): string {
  const steps = ((run.request as Row | undefined)?.trainer as Row | undefined)?.steps;
  return run.step === undefined ? (steps === undefined ? '' : `0/${s(steps)}`) : `${s(run.step)}${steps === undefined ? '' : `/${s(steps)}`}`;
}

/** The runs as a table: one row each. */
export function formatRunTable(runs: Row[], now = Date.now()): string {
  return table(
    ['run', 'status', 'step', 'heartbeat', 'base', 'checkpoint', 'updated'],
    runs.map((r) => [s(r.runId), s(r.status), progress(r), ageOf(r.lastHeartbeatAt, now), s((r.request as Row | undefined)?.base), s(r.checkpointId), s(r.updatedAt)]),
  );
}

/** The comparison with the incumbent in brief: better or not, or why it was not compared (the record's fields). */
function comparisonOf(c: Row | undefined): string {
  if (!c) return '';
  if (c.compared === false) return `not compared: ${s(c.reason)}`;
  return `${c.better === true ? 'better' : 'not better'} (${s(c.improvements)} better, ${s(c.regressions)} worse; sweep ${s(c.sweepStatus)})`;
}

/** One run's page: its state, progress, heartbeat, what it produced, and how it compared. */
export function formatRunDetail(run: Row, now = Date.now()): string {
  const facts: Array<[string, string]> = [
    ['status', s(run.status)],
    ['step', progress(run)],
    ['heartbeat', run.lastHeartbeatAt ? `${ageOf(run.lastHeartbeatAt, now)} ago (${s(run.lastHeartbeatAt)})` : '(none yet)'],
    ['base', s((run.request as Row | undefined)?.base)],
    ['dataset', s(run.datasetId)],
    ['job', s(run.jobId)],
    ['checkpoint', s(run.checkpointId)],
    ['artifact', s(run.artifactKey)],
    ['sweep', s(run.sweepId)],
    ['comparison', comparisonOf(run.comparison as Row | undefined)],
    ['proposal', run.proposal ? `${s((run.proposal as Row).proposalId)} (${s((run.proposal as Row).status)})` : ''],
    ['error', run.error ? `${s((run.error as Row).error)}: ${s((run.error as Row).cause)}` : ''],
    ['stall told', s(run.stallNotifiedAt)],
    ['execution', s(run.executionId)],
    ['resumes', run.resumes ? s(run.resumes) : ''],
    ['created', `${s(run.createdAt)}${run.createdBy ? ` by ${s(run.createdBy)}` : ''}`],
    ['updated', s(run.updatedAt)],
    ['ended', `${s(run.endedAt)}${run.stoppedBy ? ` (stopped by ${s(run.stoppedBy)})` : ''}`],
  ];
  let out = `training run ${s(run.runId)}\n`;
  for (const [k, v] of facts) if (v !== '') out += `  ${k.padEnd(11)} ${v}\n`;
  return out;
}

/** Columns of the curves table: step, then each metric the lines carry (up to 7, in first-seen order). */
export function formatCurvesTable(lines: Row[]): string {
  const metrics: string[] = [];
  for (const l of lines) for (const [k, v] of Object.entries(l)) if (typeof v === 'number' && k !== 'step' && !metrics.includes(k)) metrics.push(k);
  const shown = metrics.slice(0, 7);
  const fmt = (v: unknown) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toPrecision(4)) : '');
  return table(['step', ...shown], lines.map((l) => [s(l.step), ...shown.map((m) => fmt(l[m]))]));
}

/** The run's curves as PNG bytes (`?format=png`), or an error with the API's message. */
async function fetchCurvesPng(flags: JsonFlags, runId: string): Promise<Buffer> {
  const target = resolveTarget(flags);
  const response = await fetch(`${target.url}${runPath(runId)}/curves?format=png`, { headers: { 'x-api-key': target.apiKey, accept: 'image/png' } });
  const bytes = Buffer.from(await response.arrayBuffer());
  if (!response.ok) {
    let message = bytes.toString('utf8');
    try {
      const b = JSON.parse(message) as { error?: string; message?: string };
      message = `${b.error ?? `HTTP ${response.status}`}: ${b.message ?? ''}`;
    } catch {
      // not JSON: the text as it is
    }
    throw new Error(message);
  }
  return bytes;
}

/** `flywheel train run|status|curves|stop|resume`: training runs through the API. */
export function registerTrainCommands(program: Command): void {
  const train = program.command('train').description('training runs: build a dataset, train, register the checkpoint, sweep it, compare, propose');

  const datasetSweeps: string[] = [];
  trainOptions(
    train
      .command('run')
      .description('start a training run; prints its id and status')
      .requiredOption('--base <checkpoint>', 'the checkpoint trained from (a registry id), or tiny:<seed> for the in-code tiny model')
      .option('--run <id>', 'an eval or sweep shard run whose attempts are rollouts (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
      .option('--sweep <id>', "a sweep: every run of its shards (repeatable)", (v: string) => {
        datasetSweeps.push(v);
        return v;
      })
      .option('--no-sweep', 'do not sweep the new checkpoint (nor propose an A/B test)')
      .option('--steps <n>', 'optimiser steps')
      .option('--decision-weight <x>', 'weight of the decision-point (textual feedback) term')
      .option('--outcome-weight <y>', 'weight of the outcome (Dr. GRPO) term')
      .option('--lora-rank <r>', 'train a LoRA adapter of this rank instead of every weight')
      .option('--run-id <id>', 'name the run (default: derived from the request)')
      .option('--checkpoint <id>', 'the checkpoint id to register (default <base model>:<run id>)'),
  ).action(async (flags: RunFlags, command: Command) => {
    // `--no-sweep` and `--sweep <id>` share commander's key: read the negation from the arguments themselves.
    let root: Command = command;
    while (root.parent) root = root.parent;
    const noSweep = (root as unknown as { rawArgs: string[] }).rawArgs.includes('--no-sweep');
    const steps = numberFlag('steps', flags.steps, true);
    const decisionWeight = numberFlag('decision-weight', flags.decisionWeight, false);
    const outcomeWeight = numberFlag('outcome-weight', flags.outcomeWeight, false);
    const loraRank = numberFlag('lora-rank', flags.loraRank, true);
    const body = {
      base: flags.base,
      ...(flags.runId ? { runId: flags.runId } : {}),
      ...(flags.checkpoint ? { checkpointId: flags.checkpoint } : {}),
      dataset: { runs: flags.run ?? [], sweeps: datasetSweeps },
      trainer: {
        ...(steps !== undefined ? { steps } : {}),
        ...(decisionWeight !== undefined ? { decisionWeight } : {}),
        ...(outcomeWeight !== undefined ? { outcomeWeight } : {}),
        ...(loraRank !== undefined ? { lora: { rank: loraRank } } : {}),
      },
      ...(noSweep ? { sweep: false, proposeExperiment: false } : {}),
    };
    const b = await callForCli<{ run: Row; created: boolean }>(flags, 'POST', '/v1/training-runs', body);
    if (b) process.stdout.write(`${s(b.run.runId)} ${s(b.run.status)}${b.created ? '' : ' (existed)'}\n`);
  });

  trainOptions(train.command('status [run]').description('every run as a table; or one run: its state, step, heartbeat age, checkpoint, comparison')).action(
    async (runId: string | undefined, flags: JsonFlags) => {
      if (runId) {
        const run = await callForCli<Row>(flags, 'GET', runPath(runId));
        if (run) process.stdout.write(formatRunDetail(run));
        return;
      }
      const b = await callForCli<{ items: Row[] }>(flags, 'GET', '/v1/training-runs?limit=200');
      if (b) process.stdout.write(formatRunTable(b.items ?? []));
    },
  );

  trainOptions(train.command('curves <run>').description("a run's metrics per step as a table, or (--png) its curves as a PNG").option('--png <file>', 'write the curves as a PNG here')).action(
    async (runId: string, flags: CurvesFlags) => {
      if (flags.png) {
        const png = await fetchCurvesPng(flags, runId);
        writeFileSync(flags.png, png);
        process.stdout.write(`${flags.png} (${png.length} bytes)\n`);
        return;
      }
      const b = await callForCli<{ lines: Row[] }>(flags, 'GET', `${runPath(runId)}/curves`);
      if (b) process.stdout.write(b.lines.length === 0 ? `run ${runId} has no steps yet\n` : formatCurvesTable(b.lines));
    },
  );

  trainOptions(train.command('stop <run>').description('stop a run (its execution and its trainer job); resume it later')).action(async (runId: string, flags: JsonFlags) => {
    const run = await callForCli<Row>(flags, 'POST', `${runPath(runId)}/stop`);
    if (run) process.stdout.write(`${s(run.runId)} ${s(run.status)}\n`);
  });

  trainOptions(train.command('resume <run>').description('resume a stopped or failed run from its last saved state')).action(async (runId: string, flags: JsonFlags) => {
    const run = await callForCli<Row>(flags, 'POST', `${runPath(runId)}/resume`);
    if (run) process.stdout.write(`${s(run.runId)} ${s(run.status)}\n`);
  });
}
