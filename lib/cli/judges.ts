import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { parseJudgeRef } from '../judges/judge-identity.ts';
import { table } from './table.ts';
import { callForCli, targetOptions, type JsonFlags } from './target.ts';
import { cellText } from './format.ts';

interface Flags extends JsonFlags {
  file?: string;
  force?: boolean;
  reason?: string;
  by?: string;
  version?: string;
}

type Row = Record<string, unknown>;
/** A value as cell text: numbers rounded, lists and objects as plain text (no JSON in human output). */
const s = (v: unknown) => cellText(v);

function judgeOptions(command: Command): Command {
  return targetOptions(command).option('--json', 'print the raw JSON answer');
}

const judgePath = (name: string) => `/v1/judges/${encodeURIComponent(name)}`;

/** `name@version`, or an error that says so. */
function versionRef(text: string): { name: string; version: string } {
  const ref = parseJudgeRef(text);
  if (ref.version === undefined || ref.version === '') throw new Error(`name a version: ${text}@<version> (flywheel judges show ${ref.name} lists them)`);
  return { name: ref.name, version: ref.version };
}

function readDefinition(file: string): unknown {
  const text = readFileSync(file === '-' ? 0 : file, 'utf8');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${file} is not JSON: ${(e as Error).message}`, { cause: e });
  }
}

function kappas(calibration: Row | undefined): string {
  const criteria = (calibration?.criteria as Row[] | undefined) ?? [];
  return criteria.map((c) => `${s(c.id)} ${Number((c.kappa as Row).estimate).toFixed(2)} [${Number((c.kappa as Row).low).toFixed(2)}]`).join(', ');
}

/** A judge's page: its rule, then one row per version. */
export function formatJudgeDetail(j: Row): string {
  const rule = j.acceptanceRule as Row;
  let out = `${s(j.name)} (${s(j.kind)}): promoted ${s(j.promoted) || '(none)'}; ${s(j.versionCount)} version(s)\n`;
  out += `acceptance rule: kappa lower bound ≥ ${s(rule.minKappaLower)}, drop ≤ ${s(rule.maxKappaDrop)} vs the incumbent, ≥ ${s(rule.minItems)} items${rule.requireCheaper ? ', cheaper' : ''}\n\n`;
  out += table(
    ['version', 'status', 'model', 'taxonomy', 'registered', 'calibration (kappa [low])', 'note'],
    ((j.versions as Row[]) ?? []).map((v) => {
      const identity = v.identity as Row;
      const promotion = v.promotion as Row | undefined;
      const note = v.status === 'retired' ? s((v.retirement as Row).reason) : v.status === 'demoted' ? s((v.demotion as Row | undefined)?.reason) : promotion?.forced ? `forced: ${s(promotion.reason)}` : '';
      return [s(v.version), s(v.status), s(identity.model), s(identity.taxonomyVersion), s(v.registeredAt), kappas(v.latestCalibration as Row | undefined), note];
    }),
  );
  return out;
}

/** `flywheel judges list|show|register|promote|retire|calibrations`: the judge registry through the API. */
export function registerJudgesCommands(program: Command): void {
  const judges = program.command('judges').description('the judge registry: versions (model, prompt, rubric, decoding, output schema, taxonomy), promotion, calibration');

  judgeOptions(judges.command('list').description('every judge: kind, promoted version, versions')).action(async (flags: Flags) => {
    const b = await callForCli<Row>(flags, 'GET', '/v1/judges?limit=200');
    if (!b) return;
    process.stdout.write(
      table(
        ['name', 'kind', 'promoted', 'latest', 'versions', 'updated'],
        ((b.items as Row[]) ?? []).map((j) => [s(j.name), s(j.kind), s(j.promoted), s(j.latestVersion), s(j.versions), s(j.updatedAt)]),
      ),
    );
  });

  judgeOptions(judges.command('show <name>').description("a judge's versions, which is promoted, and each version's latest calibration")).action(async (name: string, flags: Flags) => {
    const b = await callForCli<Row>(flags, 'GET', judgePath(parseJudgeRef(name).name));
    if (b) process.stdout.write(formatJudgeDetail(b));
  });

  judgeOptions(
    judges
      .command('register')
      .description('register a judge definition (JSON: name, kind, model, prompt, rubric, decoding, outputSchema, taxonomyVersion, acceptanceRule); the same definition is the same version')
      .requiredOption('--file <path>', 'the definition ("-" reads stdin)')
      .option('--by <who>', 'who registers (default: $USER)'),
  ).action(async (flags: Flags) => {
    const def = readDefinition(flags.file!) as Row;
    const b = await callForCli<Row>(flags, 'POST', '/v1/judges', { ...def, by: flags.by ?? def.by ?? process.env.USER ?? 'cli' });
    if (b) process.stdout.write(`${b.created ? 'registered' : 'already registered'} ${s((b.ref as Row).name)}@${s((b.ref as Row).version)} (${s((b.judge as Row).status)})\n`);
  });

  judgeOptions(
    judges
      .command('promote <ref>')
      .description('promote name@version: gated by the acceptance rule on its latest calibration against the incumbent; --force --reason overrides (admin)')
      .option('--force', 'promote even though the acceptance rule refuses (needs --reason)')
      .option('--reason <text>', 'why (required with --force)')
      .option('--by <who>', 'who promotes (default: $USER)'),
  ).action(async (text: string, flags: Flags) => {
    const ref = versionRef(text);
    const b = await callForCli<Row>(flags, 'POST', `${judgePath(ref.name)}/promote`, {
      version: ref.version,
      by: flags.by ?? process.env.USER ?? 'cli',
      ...(flags.force ? { force: true } : {}),
      ...(flags.reason ? { reason: flags.reason } : {}),
    });
    if (!b) return;
    const decision = b.decision as Row;
    const previous = b.previous as Row | undefined;
    let out = b.changed ? `promoted ${ref.name}@${ref.version}${previous ? ` (replacing ${s(previous.version)})` : ''}\n` : `${ref.name}@${ref.version} already promoted\n`;
    if (!decision.accepted) out += `forced past the acceptance rule: ${((decision.reasons as string[]) ?? []).join('; ')}\n`;
    process.stdout.write(out);
  });

  judgeOptions(
    judges
      .command('retire <ref>')
      .description('retire name@version: never promoted again (retiring the promoted one demotes it)')
      .option('--reason <text>', 'why')
      .option('--by <who>', 'who retires (default: $USER)'),
  ).action(async (text: string, flags: Flags) => {
    const ref = versionRef(text);
    const b = await callForCli<Row>(flags, 'POST', `${judgePath(ref.name)}/retire`, {
      version: ref.version,
      by: flags.by ?? process.env.USER ?? 'cli',
      ...(flags.reason ? { reason: flags.reason } : {}),
    });
    if (b) process.stdout.write(b.changed ? `retired ${ref.name}@${ref.version}\n` : `${ref.name}@${ref.version} was already retired\n`);
  });

  judgeOptions(
    judges.command('calibrations <name>').description("a judge's calibration reports, newest first").option('--version <v>', 'only this version'),
  ).action(async (name: string, flags: Flags) => {
    const ref = parseJudgeRef(name);
    const version = flags.version ?? ref.version;
    const b = await callForCli<Row>(flags, 'GET', `${judgePath(ref.name)}/calibrations${version ? `?version=${encodeURIComponent(version)}` : ''}`);
    if (!b) return;
    process.stdout.write(
      table(
        ['id', 'version', 'gold set', 'created', 'kappa [low]', '$/verdict'],
        ((b.items as Row[]) ?? []).map((r) => [s(r.id), s((r.judge as Row).version), s(r.goldSet), s(r.createdAt), kappas(r), s(r.costPerVerdictUsd)]),
      ),
    );
  });

  judgeOptions(
    judges
      .command('derivations [id]')
      .description('judge derivations from top checkpoints, newest first; with an id (or --checkpoint), one derivation and its report')
      .option('--checkpoint', 'the id names the top checkpoint, not the derivation'),
  ).action(async (id: string | undefined, flags: Flags & { checkpoint?: boolean }) => {
    if (id === undefined) {
      const b = await callForCli<Row>(flags, 'GET', '/v1/judge-derivations?limit=200');
      if (!b) return;
      process.stdout.write(
        table(
          ['derivation', 'checkpoint', 'status', 'judges', 'promoted', 'created'],
          ((b.items as Row[]) ?? []).map((d) => [s(d.derivationId), s(d.checkpointId), s(d.status), ((d.judges as Row[]) ?? []).map((j) => s(j.name)).join(', '), ((d.promoted as Row[]) ?? []).map((r) => `${s(r.name)}@${s(r.version)}`).join(', '), s(d.createdAt)]),
        ),
      );
      return;
    }
    const b = await callForCli<Row>(flags, 'GET', `/v1/judge-derivations/${encodeURIComponent(id)}${flags.checkpoint ? '?by=checkpoint' : ''}`);
    if (b) process.stdout.write(formatDerivation(b));
  });
}

/** A derivation's page: its state, then one row per candidate judge (against its teacher and against people). */
export function formatDerivation(b: Row): string {
  const d = b.derivation as Row;
  const report = b.report as Row | undefined;
  let out = `${s(d.derivationId)} from ${s(d.checkpointId)}: ${s(d.status)}${d.model ? ` (model ${s(d.model)})` : ''}\n`;
  for (const skip of (d.skipped as Row[]) ?? []) out += `skipped ${s(skip.name)}: ${s(skip.reason)}\n`;
  if (!report) return out;
  const rows: string[][] = [];
  for (const j of (report.judges as Row[]) ?? []) {
    for (const kind of ['prompted', 'distilled'] as const) {
      const c = j[kind] as Row | undefined;
      if (!c) continue;
      const teacher = c.teacher as Row | undefined;
      const people = c.people as Row | undefined;
      const decision = c.decision as Row | undefined;
      rows.push([
        s(j.name),
        kind,
        c.ref ? `${s((c.ref as Row).name)}@${s((c.ref as Row).version)}` : '',
        teacher ? ((teacher.labels as Row[]) ?? []).map((l) => `${s(l.id)} κ ${l.kappa === null ? '–' : Number(l.kappa).toFixed(2)}`).join(', ') + (teacher.inSample ? ' (in sample)' : '') : '',
        people ? kappas(people) : '',
        s(c.costPerVerdictUsd),
        decision ? (decision.promoted ? 'promoted' : `refused: ${((decision.reasons as string[]) ?? []).join('; ')}`) : '',
      ]);
    }
  }
  return out + table(['judge', 'candidate', 'version', 'vs teacher', 'vs people', '$/verdict', 'decision'], rows);
}
