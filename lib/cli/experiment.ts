/**
 * `flywheel experiment …`: A/B tests between checkpoints over the API (a deployed stage or the local runtime):
 * create a draft from a JSON file, start, status (one or all), list, stop (or one arm), assign units, analyze (tables
 * per metric, the SRM line, lift charts as PNG files), decide (ship, roll back, extend).
 *
 * @example
 * npx flywheel experiment create --file exp.json && npx flywheel experiment start exp-1 && npx flywheel experiment status exp-1
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { table } from './table.ts';
import { callApi, callForCli, collect, resolveTarget, targetOptions, type JsonFlags } from './target.ts';
import { cellText } from './format.ts';

type Row = Record<string, unknown>;

interface CreateFlags extends JsonFlags {
  file: string;
}
interface ListFlags extends JsonFlags {
  status?: string;
}
interface StopFlags extends JsonFlags {
  reason: string;
  arm?: string;
}
interface AssignFlags extends JsonFlags {
  unit: string[];
  unitType?: string;
  experiment?: string[];
}
interface AnalyzeFlags extends JsonFlags {
  png?: string;
}
interface DecideFlags extends JsonFlags {
  kind: string;
  arm?: string;
  reason: string;
  extendDays?: string;
}

/** A value as cell text: numbers rounded, lists and objects as plain text (no JSON in human output). */
const s = (v: unknown) => cellText(v);
const experimentPath = (id: string) => `/v1/experiments/${encodeURIComponent(id)}`;
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** A number for a table: integers as they are, else 4 significant digits without trailing zeros; empty when absent. */
function fmt(v: unknown): string {
  const n = num(v);
  if (n === undefined) return '';
  return Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(4)));
}

/** A relative change as a signed percentage (`+2.31%`). */
function pct(v: unknown): string {
  const n = num(v);
  return n === undefined ? '' : `${n >= 0 ? '+' : ''}${(n * 100).toFixed(2)}%`;
}

/** An interval of relative lift in percent (`[-1.20%, +3.40%]`). */
function interval(v: unknown): string {
  const i = v as { low?: unknown; high?: unknown } | null | undefined;
  return i && num(i.low) !== undefined && num(i.high) !== undefined ? `[${pct(i.low)}, ${pct(i.high)}]` : '';
}

/** A p-value: 4 digits, or `<0.0001`. */
function pValue(v: unknown): string {
  const n = num(v);
  if (n === undefined) return '';
  return n < 0.0001 ? '<0.0001' : n.toFixed(4);
}

/** The experiments as a table: one row each. */
export function formatExperimentTable(items: Row[]): string {
  return table(
    ['experiment', 'status', 'arms', 'primary', 'planned/arm', 'ramp', 'created'],
    items.map((e) => {
      const d = (e.definition ?? {}) as Row;
      const arms = (d.arms as Row[] | undefined) ?? [];
      const ramp = (d.ramp as Row[] | undefined) ?? [];
      const step = ramp[num(e.rampStep) ?? 0];
      return [
        s(d.id),
        s(e.status),
        arms.map((a) => s(a.id)).join(','),
        s((d.metrics as Row | undefined)?.primary),
        s(e.plannedUnitsPerArm),
        step ? `${s(step.percent)}%` : '',
        s(e.createdAt),
      ];
    }),
  );
}

/**
 * One experiment's page: arms (checkpoint, weight, control, stopped), units against the plan, the ramp step in force,
 * stopped arms, the last analysis (time, units per arm, progress, SRM, recommendation) and the history.
 */
export function formatExperimentStatus(detail: Row, lastAnalysis?: Row): string {
  const e = (detail.experiment ?? {}) as Row;
  const d = (e.definition ?? {}) as Row;
  const arms = (d.arms as Row[] | undefined) ?? [];
  const ramp = (d.ramp as Row[] | undefined) ?? [];
  const stopped = (e.stoppedArms as Row[] | undefined) ?? [];
  const units = (lastAnalysis?.unitsPerArm ?? {}) as Record<string, unknown>;
  const planned = num(e.plannedUnitsPerArm);
  const stepIndex = num(e.rampStep) ?? 0;
  const step = ramp[stepIndex];
  let out = `experiment ${s(d.id)}: ${s(d.name)}\n`;
  const facts: Array<[string, string]> = [
    ['status', `${s(e.status)}${e.stopReason ? ` (${s(e.stopReason)})` : ''}`],
    ['unit', s(d.unitType)],
    ['metrics', `primary ${s((d.metrics as Row | undefined)?.primary)}`],
    ['planned', planned === undefined ? '' : `${planned} units per arm`],
    ['ramp', step ? `step ${stepIndex + 1}/${ramp.length}: ${s(step.percent)}% since ${s(e.rampStepSince)}` : ''],
    ['holdout', num(d.holdout) ? `${((num(d.holdout) ?? 0) * 100).toFixed(1)}%` : ''],
    ['started', s(e.startedAt)],
    ['stopped', s(e.stoppedAt)],
    ['decision', e.decision ? `${s((e.decision as Row).kind)}${(e.decision as Row).arm ? ` ${s((e.decision as Row).arm)}` : ''} by ${s((e.decision as Row).by)}: ${s((e.decision as Row).reason)}` : ''],
  ];
  for (const [k, v] of facts) if (v !== '') out += `  ${k.padEnd(9)} ${v}\n`;
  out += '\n';
  out += table(
    ['arm', 'checkpoint', 'weight', 'control', 'units', 'progress', 'stopped'],
    arms.map((a) => {
      const n = num(units[s(a.id)]);
      const stop = stopped.find((x) => x.arm === a.id);
      return [
        s(a.id),
        s(a.checkpoint),
        s(a.weight),
        a.control === true ? 'yes' : '',
        n === undefined ? '' : String(n),
        n === undefined || !planned ? '' : `${((n / planned) * 100).toFixed(1)}%`,
        stop ? `${s(stop.reason)} ${s(stop.at)}: ${s(stop.detail)}` : '',
      ];
    }),
  );
  out += '\n';
  if (lastAnalysis) {
    const srm = (lastAnalysis.srm ?? {}) as Row;
    const rec = (lastAnalysis.recommendation ?? {}) as Row;
    out += `last analysis ${s(lastAnalysis.analysisId)} at ${s(lastAnalysis.at)}: progress ${num(lastAnalysis.progress) === undefined ? '?' : `${((num(lastAnalysis.progress) ?? 0) * 100).toFixed(1)}%`} of plan\n`;
    out += `${formatSrm(srm)}\n`;
    out += `recommendation: ${s(rec.action)}${rec.arm ? ` ${s(rec.arm)}` : ''}: ${s(rec.because)}\n`;
  } else {
    out += `last analysis: ${e.lastAnalysisAt ? s(e.lastAnalysisAt) : '(none yet)'}\n`;
  }
  const changes = (detail.changes as Row[] | undefined) ?? [];
  if (changes.length > 0) {
    out += '\nhistory\n';
    out += table(
      ['seq', 'at', 'change', 'by', 'detail'],
      changes.map((c) => [s(c.seq), s(c.at), s(c.change), s(c.by), s(c.detail)]),
    );
  }
  return out;
}

/** The sample-ratio line: χ², p and whether it is a mismatch (p < 0.001). */
export function formatSrm(srm: Row): string {
  const observed = Object.entries((srm.observedUnits ?? {}) as Record<string, unknown>).map(([arm, n]) => `${arm} ${s(n)}`).join(', ');
  const verdict = srm.mismatch === true ? 'MISMATCH (p < 0.001): the assignment or the exposure logging is broken; do not trust the metrics' : 'ok';
  return `SRM: chi-squared ${fmt(srm.chiSquared) || '-'}, p ${pValue(srm.pValue) || '-'} (${observed}): ${verdict}`;
}

/** An analysis as tables: per metric, the control's value, then each treatment against it; then SRM and the recommendation. */
export function formatAnalysis(analysis: Row): string {
  let out = `analysis ${s(analysis.analysisId)} of ${s(analysis.experimentId)} at ${s(analysis.at)} (${s(analysis.engine)}, ${fmt(analysis.queryMs)} ms)\n`;
  out += `exposures ${s(analysis.from)} .. ${s(analysis.to)}; progress ${num(analysis.progress) === undefined ? '?' : `${((num(analysis.progress) ?? 0) * 100).toFixed(1)}%`} of ${s(analysis.plannedUnitsPerArm)} units per arm\n`;
  for (const m of (analysis.metrics as Row[] | undefined) ?? []) {
    const scale = num(m.displayScale) ?? 1;
    const arms = (m.arms as Row[] | undefined) ?? [];
    const comparisons = (m.comparisons as Row[] | undefined) ?? [];
    const value = (arm: string) => {
      const v = num(arms.find((a) => a.arm === arm)?.value);
      return v === undefined ? '' : fmt(v * scale);
    };
    const unitsOf = (arm: string) => s(arms.find((a) => a.arm === arm)?.units);
    const control = s(comparisons[0]?.control ?? arms[0]?.arm);
    out += `\n${s(m.metric)} (${s(m.role)}, ${s(m.kind)}, ${s(m.direction)} is better)${m.guardrailBreached === true ? ' GUARDRAIL BREACHED' : ''}\n`;
    const rows: string[][] = [[control, unitsOf(control), value(control), '', '', '', '', '', '', 'control']];
    for (const c of comparisons) {
      rows.push([s(c.arm), unitsOf(s(c.arm)), value(s(c.arm)), pct(c.relativeLift), interval(c.ci), interval(c.sequentialCi), pValue(c.pValue), pValue(c.adjustedPValue), num(c.chanceToWin) === undefined ? '' : `${((num(c.chanceToWin) ?? 0) * 100).toFixed(1)}%`, s(c.verdict)]);
    }
    out += table(['arm', 'units', 'value', 'lift', 'CI', 'sequential CI', 'p', 'adjusted p', 'chance to win', 'verdict'], rows);
    const rules = [...new Set(comparisons.map((c) => s(c.rule)).filter((r) => r !== ''))];
    for (const r of rules) out += `  rule: ${r}\n`;
  }
  out += `\n${formatSrm((analysis.srm ?? {}) as Row)}\n`;
  const rec = (analysis.recommendation ?? {}) as Row;
  out += `recommendation: ${s(rec.action)}${rec.arm ? ` ${s(rec.arm)}` : ''}: ${s(rec.because)}\n`;
  return out;
}

/** The assignments as a table. */
export function formatAssignments(assignments: Row[]): string {
  return table(
    ['experiment', 'unit', 'arm', 'checkpoint', 'reason', 'log exposure'],
    assignments.map((a) => [s(a.experiment), s(a.unitId), s(a.arm), s(a.checkpoint), s(a.reason), a.logExposure === true ? 'yes' : 'no']),
  );
}

/** A number flag, or an error naming the flag. */
function numberFlag(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n)) throw new Error(`--${name} takes a number, not ${JSON.stringify(text)}`);
  return n;
}

/** A metric's lift chart as PNG bytes, or an error with the API's message. */
async function fetchLiftPng(flags: JsonFlags, id: string, metric: string): Promise<Buffer> {
  const target = resolveTarget(flags);
  const response = await fetch(`${target.url}${experimentPath(id)}/lift/${encodeURIComponent(metric)}`, { headers: { 'x-api-key': target.apiKey, accept: 'image/png' } });
  const bytes = Buffer.from(await response.arrayBuffer());
  if (!response.ok || !(response.headers.get('content-type') ?? '').startsWith('image/png')) {
    let message = bytes.toString('utf8');
    try {
      const b = JSON.parse(message) as { error?: string; message?: string };
      message = `${b.error ?? `HTTP ${response.status}`}: ${b.message ?? ''}`;
    } catch {
      // not JSON: the text as it is
    }
    throw new Error(`lift chart of ${metric}: ${message}`);
  }
  return bytes;
}

/** The newest analysis of an experiment, or undefined (none yet, or the analyses route answered an error). */
async function lastAnalysisOf(flags: JsonFlags, id: string): Promise<Row | undefined> {
  const { status, body } = await callApi(resolveTarget(flags), 'GET', `${experimentPath(id)}/analyses?limit=1`);
  if (status !== 200) return undefined;
  const b = body as Row | Row[];
  const items = Array.isArray(b) ? b : ((b.items ?? b.analyses ?? []) as Row[]);
  return items[0];
}

function withOptions(command: Command): Command {
  return targetOptions(command).option('--json', 'print the raw JSON answer');
}

/** `flywheel experiment create|start|status|list|stop|assign|analyze|decide`: A/B tests between checkpoints through the API. */
export function registerExperimentCommands(program: Command): void {
  const experiment = program.command('experiment').description('A/B tests between checkpoints: define, start, watch, analyse, decide, stop');

  withOptions(experiment.command('create').description('create a draft from a JSON definition (arms, metrics, power, ramp …)').requiredOption('--file <path>', 'the definition (ExperimentInput) as JSON')).action(
    async (flags: CreateFlags) => {
      let body: unknown;
      try {
        body = JSON.parse(readFileSync(flags.file, 'utf8'));
      } catch (error) {
        throw new Error(`--file ${flags.file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      const b = await callForCli<{ experiment: Row; created: boolean }>(flags, 'POST', '/v1/experiments', body);
      if (b) process.stdout.write(`${s((b.experiment.definition as Row).id)} ${s(b.experiment.status)} (${s(b.experiment.plannedUnitsPerArm)} units per arm planned)${b.created ? '' : ' (existed)'}\n`);
    },
  );

  withOptions(experiment.command('start <id>').description('start a draft at its first ramp step')).action(async (id: string, flags: JsonFlags) => {
    const b = await callForCli<{ experiment: Row; changed: boolean }>(flags, 'POST', `${experimentPath(id)}/start`);
    if (b) process.stdout.write(`${id} ${s(b.experiment.status)}${b.changed ? '' : ' (unchanged)'}\n`);
  });

  withOptions(experiment.command('status [id]').description('every experiment as a table; or one: arms, units vs plan, ramp, stopped arms, last analysis and recommendation, history')).action(
    async (id: string | undefined, flags: JsonFlags) => {
      if (!id) {
        const b = await callForCli<{ items: Row[] }>(flags, 'GET', '/v1/experiments?limit=200');
        if (b) process.stdout.write(formatExperimentTable(b.items));
        return;
      }
      const detail = await callForCli<Row>(flags, 'GET', experimentPath(id));
      if (detail) process.stdout.write(formatExperimentStatus(detail, await lastAnalysisOf(flags, id)));
    },
  );

  withOptions(experiment.command('list').description('experiments as a table').option('--status <status>', 'only draft, running, stopped or decided')).action(async (flags: ListFlags) => {
    const b = await callForCli<{ items: Row[] }>(flags, 'GET', `/v1/experiments?limit=200${flags.status ? `&status=${encodeURIComponent(flags.status)}` : ''}`);
    if (b) process.stdout.write(formatExperimentTable(b.items));
  });

  withOptions(
    experiment
      .command('stop <id>')
      .description('stop the experiment, or one arm (--arm): its units get the control')
      .requiredOption('--reason <text>', 'why (recorded)')
      .option('--arm <arm>', 'stop this arm only (never the control)'),
  ).action(async (id: string, flags: StopFlags) => {
    const b = await callForCli<{ experiment: Row; changed: boolean }>(flags, 'POST', `${experimentPath(id)}/stop`, { reason: flags.reason, ...(flags.arm ? { arm: flags.arm } : {}) });
    if (!b) return;
    const what = flags.arm ? `arm ${flags.arm} stopped` : s(b.experiment.status);
    process.stdout.write(`${id} ${what}${b.changed ? '' : ' (unchanged)'}\n`);
  });

  withOptions(
    experiment
      .command('assign')
      .description('the arm of units in the running experiments (what the serving layer asks)')
      .requiredOption('--unit <id>', 'a unit id (repeatable)', collect)
      .option('--unit-type <type>', 'user or workspace', 'user')
      .option('--experiment <id>', 'only this experiment (repeatable)', collect),
  ).action(async (flags: AssignFlags) => {
    const b = await callForCli<{ assignments: Row[] }>(flags, 'POST', '/v1/assignments', {
      unitIds: flags.unit,
      unitType: flags.unitType,
      ...(flags.experiment ? { experiments: flags.experiment } : {}),
    });
    if (b) process.stdout.write(b.assignments.length === 0 ? 'no running experiment assigns these units\n' : formatAssignments(b.assignments));
  });

  withOptions(
    experiment.command('analyze <id>').description('analyse now: a table per metric (value, lift, CI, sequential CI, p, adjusted p, chance to win, verdict) and the SRM line').option('--png <dir>', "save each metric's lift chart here"),
  ).action(async (id: string, flags: AnalyzeFlags) => {
    // --json prints the analysis itself; --png still saves the charts, so both are asked for without --json here.
    const b = await callForCli<Row>({ ...flags, json: false }, 'POST', `${experimentPath(id)}/analyze`);
    if (!b) return;
    const analysis = (b.analysis ?? b) as Row;
    process.stdout.write(flags.json ? `${JSON.stringify(analysis, null, 2)}\n` : formatAnalysis(analysis));
    if (flags.png) {
      mkdirSync(flags.png, { recursive: true });
      for (const m of (analysis.metrics as Row[] | undefined) ?? []) {
        const metric = s(m.metric);
        try {
          const png = await fetchLiftPng(flags, id, metric);
          const file = join(flags.png, `lift-${metric}.png`);
          writeFileSync(file, png);
          if (!flags.json) process.stdout.write(`${file} (${png.length} bytes)\n`);
        } catch (error) {
          // One missing chart does not lose the others: say which, and fail the command at the end.
          process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
          process.exitCode = 1;
        }
      }
    }
  });

  withOptions(
    experiment
      .command('decide <id>')
      .description('ship an arm (its checkpoint becomes the incumbent), roll back to the control, or extend; rests on the newest analysis')
      .requiredOption('--kind <kind>', 'ship, rollback or extend')
      .requiredOption('--reason <text>', 'why (recorded)')
      .option('--arm <arm>', 'ship: the arm to ship')
      .option('--extend-days <n>', 'extend: days added'),
  ).action(async (id: string, flags: DecideFlags) => {
    const extendDays = numberFlag('extend-days', flags.extendDays);
    const b = await callForCli<{ experiment: Row; decision?: Row; changed?: boolean }>(flags, 'POST', `${experimentPath(id)}/decide`, {
      kind: flags.kind,
      reason: flags.reason,
      ...(flags.arm ? { arm: flags.arm } : {}),
      ...(extendDays !== undefined ? { extendDays } : {}),
    });
    if (!b) return;
    const d = (b.decision ?? b.experiment.decision ?? {}) as Row;
    process.stdout.write(`${id} ${s(b.experiment.status)}: ${s(d.kind)}${d.arm ? ` ${s(d.arm)}` : ''}${d.promoted ? ` (incumbent ${s(d.promoted)})` : ''}${b.changed === false ? ' (unchanged)' : ''}\n`);
  });
}
