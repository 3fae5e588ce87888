/**
 * `flywheel annotate …`: annotation queues, gold sets, calibrating a judge against people and checking its drift, from
 * the shell (the API's `/v1/annotations`, `/v1/gold-sets`, `/v1/judges/{name}/calibrate|drift-check`).
 */
import { GOLD_SET_SUBJECTS_PER_REQUEST } from '../judges/http/annotation-handlers.ts';
import type { Command } from 'commander';
import { table } from './table.ts';
import { callForCli, collect, targetOptions, type JsonFlags } from './target.ts';
import { cellText } from './format.ts';

interface Flags extends JsonFlags {
  queue?: string;
  reason?: string;
  status?: string;
  limit?: string;
  cursor?: string;
  label?: string[];
  annotator?: string;
  signal?: string[];
  attempt?: string[];
  pair?: string[];
  labels?: string;
  goldSet?: string;
  judge?: string;
  twoPerson?: string;
  description?: string;
  version?: string;
  retest?: string;
  concurrency?: string;
  seed?: string;
  window?: string;
  maxDrop?: string;
  minN?: string;
  dryRun?: boolean;
}

type Row = Record<string, unknown>;
/** A value as cell text: numbers rounded, lists and objects as plain text (no JSON in human output). */
const s = (v: unknown) => cellText(v);
const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
const options = (command: Command) => targetOptions(command).option('--json', 'print the raw JSON answer');

/** `run/attemptId` → an attempt subject (the attempt id may hold `/`: the run id ends at the first one). */
function attemptOf(text: string): { kind: 'attempt'; runId: string; attemptId: string } {
  const slash = text.indexOf('/');
  if (slash <= 0 || slash === text.length - 1) throw new Error(`an attempt is <runId>/<attemptId>, got ${JSON.stringify(text)}`);
  return { kind: 'attempt', runId: text.slice(0, slash), attemptId: text.slice(slash + 1) };
}

/** The subjects the flags name: `--signal`, `--attempt`, `--pair a,b` (each repeatable). */
function subjectsOf(flags: Flags): unknown[] {
  const pairs = (flags.pair ?? []).map((p) => {
    const [a, b, ...rest] = p.split(',');
    if (!a || !b || rest.length > 0) throw new Error(`a pair is <runId>/<attemptId>,<runId>/<attemptId>, got ${JSON.stringify(p)}`);
    return { kind: 'pair', a: attemptOf(a), b: attemptOf(b) };
  });
  return [...(flags.signal ?? []).map((signalKey) => ({ kind: 'signal', signalKey })), ...(flags.attempt ?? []).map(attemptOf), ...pairs];
}

/** `--label c1=pass --label mode:scope-calibration=yes` → `{ c1: 'pass', … }`. */
export function parseLabelFlags(values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const eq = v.lastIndexOf('=');
    if (eq <= 0) throw new Error(`a label is <id>=<value> (c1=pass, preference=a, mode:<id>=yes), got ${JSON.stringify(v)}`);
    out[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return out;
}

function itemRows(items: Row[]): string {
  return table(
    ['id', 'queue', 'reason', 'subject', 'asks', 'status', 'labelled by', 'created'],
    items.map((i) => [s(i.id), s(i.queue), s(i.reason), s(i.subjectKey), (i.asks as string[]).join(','), s(i.status), [i.annotator, i.secondAnnotator].filter(Boolean).join(', '), s(i.createdAt)]),
  );
}

/** `flywheel annotate list|add|label|gold create|gold add|gold show|calibrate|drift-check`. */
export function registerAnnotateCommands(program: Command): void {
  const annotate = program.command('annotate').description('annotation queues and gold sets: people label, judges are calibrated against them, drift is watched');

  options(
    annotate
      .command('list')
      .description('annotation items, newest first')
      .option('--queue <name>', 'gold:<gold set>, drift:<judge>, or a queue of your own')
      .option('--reason <r>', 'gold-set | two-person-slice | production-sample | disagreement')
      .option('--status <s>', 'pending (default) | done')
      .option('--limit <n>', 'page size (default 50)')
      .option('--cursor <c>', 'the next page'),
  ).action(async (flags: Flags) => {
    const q = new URLSearchParams();
    for (const k of ['queue', 'reason', 'status', 'limit', 'cursor'] as const) if (flags[k] !== undefined) q.set(k, flags[k]);
    const body = await callForCli<{ items: Row[]; cursor?: string }>(flags, 'GET', `/v1/annotations${q.size > 0 ? `?${q}` : ''}`);
    if (body) process.stdout.write(`${itemRows(body.items)}${body.cursor ? `next page: --cursor ${body.cursor}\n` : ''}`);
  });

  options(
    annotate
      .command('add')
      .description('queue subjects for people to label (into a gold set with --gold-set)')
      .option('--signal <key>', 'a signal (feedback:<eventId>, report:<reportId>); repeatable', collect)
      .option('--attempt <run/attempt>', 'an attempt (<runId>/<attemptId>); repeatable', collect)
      .option('--pair <a,b>', 'two attempts to compare (<runId>/<attemptId>,<runId>/<attemptId>); repeatable', collect)
      .option('--gold-set <name>', 'add to this gold set (it says what to label)')
      .option('--reason <r>', 'without --gold-set: production-sample | disagreement | gold-set | two-person-slice')
      .option('--queue <name>', 'without --gold-set: the queue (default: the reason)')
      .option('--labels <ids>', 'without --gold-set: label ids to ask for, comma-separated (default: the task rubric, every mode, or preference)'),
  ).action(async (flags: Flags) => {
    const subjects = subjectsOf(flags);
    if (subjects.length === 0) throw new Error('name at least one --signal, --attempt or --pair');
    const rows: string[][] = [];
    for (const subject of subjects) {
      const body = flags.goldSet
        ? { goldSet: flags.goldSet, subject }
        : { subject, reason: flags.reason, ...(flags.queue ? { queue: flags.queue } : {}), ...(flags.labels ? { labels: flags.labels.split(',') } : {}) };
      const answer = await callForCli<{ item: Row; created: boolean }>(flags, 'POST', '/v1/annotations', body);
      if (!answer) return;
      rows.push([s(answer.item.id), s(answer.item.subjectKey), s(answer.item.reason), answer.created ? 'queued' : 'already queued']);
    }
    process.stdout.write(table(['id', 'subject', 'reason', ''], rows));
  });

  options(
    annotate
      .command('label <id>')
      .description('label an item: every label id it asks for (modes not named are no)')
      .option('--label <id=value>', 'c1=pass | preference=a | mode:<id>=yes; repeatable', collect)
      .option('--annotator <who>', 'who labels (default: $USER)'),
  ).action(async (id: string, flags: Flags) => {
    const annotator = flags.annotator ?? process.env.USER ?? 'cli';
    const body = await callForCli<{ item: Row; drift?: Row }>(flags, 'POST', `/v1/annotations/${encodeURIComponent(id)}/labels`, { annotator, labels: parseLabelFlags(flags.label ?? []) });
    if (!body) return;
    let out = `${s(body.item.id)}: ${s(body.item.status)} (${[body.item.annotator, body.item.secondAnnotator].filter(Boolean).join(', ')})\n`;
    if (body.drift) out += `drift check of ${s(body.drift.judge)}: ${s(body.drift.status)}: ${s(body.drift.reason)}\n`;
    process.stdout.write(out);
  });

  const gold = annotate.command('gold').description('gold sets: the items a judge is calibrated on');
  options(
    gold
      .command('create <name>')
      .description('create a gold set for a judge, optionally with its first subjects')
      .requiredOption('--judge <name>', 'the judge it calibrates')
      .requiredOption('--labels <ids>', 'label ids each item asks for, comma-separated (criteria, preference, or mode:<id>s)')
      .option('--two-person <fraction>', 'share of items two people label (default 0.2)')
      .option('--description <text>', 'what it holds')
      .option('--signal <key>', 'a signal; repeatable', collect)
      .option('--attempt <run/attempt>', 'an attempt; repeatable', collect)
      .option('--pair <a,b>', 'two attempts; repeatable', collect),
  ).action(async (name: string, flags: Flags) => {
    const subjects = subjectsOf(flags);
    const definition = {
      name,
      judge: flags.judge,
      labels: (flags.labels ?? '').split(',').filter(Boolean),
      ...(flags.twoPerson !== undefined ? { twoPersonFraction: Number(flags.twoPerson) } : {}),
      ...(flags.description ? { description: flags.description } : {}),
    };
    // The API takes a bounded number of subjects per request; posting the same definition again queues the rest.
    let added = 0;
    let goldSet: Row | undefined;
    for (let i = 0; i === 0 || i < subjects.length; i += GOLD_SET_SUBJECTS_PER_REQUEST) {
      const batch = subjects.slice(i, i + GOLD_SET_SUBJECTS_PER_REQUEST);
      const body = await callForCli<{ goldSet: Row; added: number }>(flags, 'POST', '/v1/gold-sets', { ...definition, ...(batch.length > 0 ? { subjects: batch } : {}) });
      if (!body) return;
      added += body.added;
      goldSet = body.goldSet;
    }
    if (goldSet) process.stdout.write(`gold set ${s(goldSet.name)} for ${s(goldSet.judge)}: ${added} item(s) queued in gold:${s(goldSet.name)}\n`);
  });
  options(gold.command('show <name>').description('a gold set: label ids, pending and done items, the two-person slice')).action(async (name: string, flags: Flags) => {
    const body = await callForCli<{ goldSet: Row; pending: number; done: number; twoPerson: number }>(flags, 'GET', `/v1/gold-sets/${encodeURIComponent(name)}`);
    if (!body) return;
    const g = body.goldSet;
    process.stdout.write(
      `${s(g.name)} (judge ${s(g.judge)}, ${s(g.subjectKind)}s): labels ${(g.labels as string[]).join(', ')}\n` +
        `${body.done} done, ${body.pending} pending; ${body.twoPerson} in the two-person slice (${s(g.twoPersonFraction)})\n`,
    );
  });

  options(
    annotate
      .command('calibrate <judge>')
      .description('calibrate a judge version on a gold set (rubric judges on attempts, pairwise judges on pairs, failure-mode judges on signals, reward models): agreement with people, stored as its report; prompted judges answer with the model they name, else FLYWHEEL_JUDGE_MODEL')
      .requiredOption('--gold-set <name>', 'the gold set')
      .option('--version <v>', 'the version (default: the promoted one)')
      .option('--retest <fraction>', 'share judged twice for test–retest (default 0.2)')
      .option('--concurrency <n>', 'judge calls at once (default 8)')
      .option('--seed <n>', 'seed of the retest sample and the bootstrap'),
  ).action(async (judge: string, flags: Flags) => {
    const body = await callForCli<Row>(flags, 'POST', `/v1/judges/${encodeURIComponent(judge)}/calibrate`, {
      goldSet: flags.goldSet,
      ...(flags.version ? { version: flags.version } : {}),
      ...(flags.retest !== undefined ? { retestFraction: num(flags.retest) } : {}),
      ...(flags.concurrency !== undefined ? { concurrency: num(flags.concurrency) } : {}),
      ...(flags.seed !== undefined ? { seed: num(flags.seed) } : {}),
    });
    if (!body) return;
    const j = body.judge as Row;
    const rows = (body.criteria as Row[]).map((c) => {
      const k = c.kappa as Row;
      const h = c.humanCeiling as Row | undefined;
      return [s(c.id), s(c.n), `${Number(k.estimate).toFixed(3)} [${Number(k.low).toFixed(3)}, ${Number(k.high).toFixed(3)}]`, Number(c.accuracy).toFixed(3), h ? Number(h.estimate).toFixed(3) : ''];
    });
    const rt = body.testRetest as Row | undefined;
    const ps = body.positionSwap as Row | undefined;
    process.stdout.write(
      `report ${s(body.id)}: ${s(j.name)}@${s(j.version)} on ${s(body.goldSet)}\n${table(['label', 'n', 'kappa [95%]', 'accuracy', 'people'], rows)}` +
        (rt ? `test–retest: ${s(rt.agreement)} agreement over ${s(rt.n)}\n` : '') +
        (ps ? `position swap: ${s(ps.consistency)} consistent over ${s(ps.n)} pairs\n` : ''),
    );
  });

  options(
    annotate
      .command('drift-check <judge>')
      .description("kappa on the rolling window of people's labels of production verdicts; a drop demotes the judge and tells people")
      .option('--window <n>', 'pairs in the window (default 200)')
      .option('--max-drop <k>', 'how far below the calibration kappa (default 0.1)')
      .option('--min-n <n>', 'pairs a label needs to be judged (default 30)')
      .option('--dry-run', 'check only: neither demote nor notify'),
  ).action(async (judge: string, flags: Flags) => {
    const body = await callForCli<Row>(flags, 'POST', `/v1/judges/${encodeURIComponent(judge)}/drift-check`, {
      ...(flags.window !== undefined ? { window: num(flags.window) } : {}),
      ...(flags.maxDrop !== undefined ? { maxDrop: num(flags.maxDrop) } : {}),
      ...(flags.minN !== undefined ? { minN: num(flags.minN) } : {}),
      ...(flags.dryRun ? { dryRun: true } : {}),
    });
    if (!body) return;
    const rows = ((body.labels as Row[]) ?? []).map((l) => [s(l.id), s(l.n), l.kappa === null ? 'undefined' : Number(l.kappa).toFixed(3), l.baseline === undefined ? '' : Number(l.baseline).toFixed(3), l.dropped ? 'DROP' : '']);
    process.stdout.write(`${s(body.judge)}: ${s(body.status)}: ${s(body.reason)}${body.demoted ? ' (demoted; people told)' : ''}\n${rows.length > 0 ? table(['label', 'n', 'kappa', 'calibrated', ''], rows) : ''}`);
  });
}
