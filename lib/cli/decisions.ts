import type { Command } from 'commander';
import { table } from './table.ts';
import { callForCli, collect, targetOptions, type JsonFlags } from './target.ts';
import { cellText } from './format.ts';

interface Flags extends JsonFlags {
  run?: string;
  attempt?: string;
  status?: string;
  hintClass?: string;
  limit?: string;
  locatorModel?: string;
  source?: string[];
  feedback?: string[];
  attemptId?: string[];
}

type Row = Record<string, unknown>;
/** A value as cell text: numbers rounded, lists and objects as plain text (no JSON in human output). */
const s = (v: unknown) => cellText(v);
const oneLine = (v: unknown, max = 60) => {
  const t = s(v).replace(/\s+/g, ' ').trim();
  return t.length <= max ? t : `${t.slice(0, max - 1)}…`;
};

function decisionOptions(command: Command): Command {
  return targetOptions(command).option('--json', 'print the raw JSON answer');
}

/** A decision record's page: where it is, its hint, its source and the leakage check. */
export function formatDecision(d: Row): string {
  const t = d.trajectory as Row;
  const source = d.source as Row;
  const hint = d.hint as Row;
  const leakage = d.leakage as Row;
  const span = d.charSpan as Row | undefined;
  const tokens = d.tokenSpan as Row | undefined;
  let out = `${s(d.decisionId)} (${s(d.status)}): ${s(d.hintClass)} at ${s(d.messageId)} (turn ${s(d.turn)})\n`;
  out += `trajectory: ${s(t.blobKey)}${t.runId ? ` (run ${s(t.runId)})` : ''}${t.feedbackEventId ? ` (feedback ${s(t.feedbackEventId)})` : ''}\n`;
  if (span) out += `characters: ${s(span.field)}${span.toolCallId ? ` of ${s(span.toolCallId)}` : ''} [${s(span.start)}, ${s(span.end)})\n`;
  out += `tokens: ${tokens ? `[${s(tokens.start)}, ${s(tokens.end)})` : 'the whole message'}\n`;
  out += `source: ${s(source.kind)} ${Object.entries(source).filter(([k]) => k !== 'kind').map(([k, v]) => `${k}=${oneLine(v, 80)}`).join(' ')}\n`;
  out += `hint (by ${s(hint.by)}${hint.model ? ` ${s(hint.model)}` : ''}, inserted ${s((d.insertion as Row).at)} as ${s((d.insertion as Row).role)}):\n${s(hint.text)}\n`;
  out += `leakage check: ${leakage.passed ? 'passed' : 'failed'}\n`;
  for (const f of (leakage.findings as Row[]) ?? []) out += `  ${s(f.kind)}: ${s(f.text)}\n`;
  return out;
}

/** `flywheel decisions list|show|extract`: decision records (one bad decision and its hint) through the API. */
export function registerDecisionsCommands(program: Command): void {
  const decisions = program.command('decisions').description('decision records: one bad decision of a rollout, its hint and where it came from (training with textual feedback)');

  decisionOptions(
    decisions
      .command('list')
      .description('decision records, newest first')
      .option('--run <runId>', 'of one eval run')
      .option('--attempt <attemptId>', 'of one attempt')
      .option('--status <status>', 'usable or rejected')
      .option('--hint-class <class>', 'available-tools, tool-arguments, tool-unavailable, sandbox-rules, person-comment, judge-criterion, model-located')
      .option('--limit <n>', 'at most this many', '100'),
  ).action(async (flags: Flags) => {
    const q = new URLSearchParams();
    if (flags.run) q.set('run', flags.run);
    if (flags.attempt) q.set('attempt', flags.attempt);
    if (flags.status) q.set('status', flags.status);
    if (flags.hintClass) q.set('hintClass', flags.hintClass);
    q.set('limit', flags.limit ?? '100');
    const b = await callForCli<Row>(flags, 'GET', `/v1/decisions?${q.toString()}`);
    if (!b) return;
    process.stdout.write(
      table(
        ['decision', 'status', 'class', 'source', 'message', 'hint', 'created'],
        ((b.items as Row[]) ?? []).map((d) => [s(d.decisionId), s(d.status), s(d.hintClass), s((d.source as Row).kind), s(d.messageId), oneLine((d.hint as Row).text), s((d.lineage as Row).createdAt)]),
      ),
    );
    if (b.cursor) process.stdout.write('(more: raise --limit)\n');
  });

  decisionOptions(decisions.command('show <decisionId>').description('one decision record')).action(async (id: string, flags: Flags) => {
    const b = await callForCli<Row>(flags, 'GET', `/v1/decisions/${encodeURIComponent(id)}`);
    if (b) process.stdout.write(formatDecision(b));
  });

  decisionOptions(
    decisions
      .command('extract')
      .description("extract decision records from a run's attempts (harness events, judge criteria, a locator model) or feedback events (a person's comment)")
      .option('--run <runId>', 'the eval run whose attempts are read')
      .option('--attempt-id <id>', 'only this attempt of the run (repeatable)', collect)
      .option('--feedback <eventId>', 'a feedback event (repeatable)', collect)
      .option('--source <kind>', 'harness-event, person, judge or locator-model (repeatable; default: every one that applies)', collect)
      .option('--locator-model <spec>', 'a model that locates the first wrong decision of failed attempts (openai:<model>@<baseUrl>)'),
  ).action(async (flags: Flags) => {
    const b = await callForCli<Row>(flags, 'POST', '/v1/decisions/extract', {
      ...(flags.run ? { runId: flags.run } : {}),
      ...(flags.attemptId ? { attemptIds: flags.attemptId } : {}),
      ...(flags.feedback ? { feedbackEventIds: flags.feedback } : {}),
      ...(flags.source ? { sources: flags.source } : {}),
      ...(flags.locatorModel ? { locatorModel: flags.locatorModel } : {}),
    });
    if (!b) return;
    const byStatus = b.byStatus as Row;
    const rechecked = typeof b.rechecked === 'number' && b.rechecked > 0 ? ` (${b.rechecked} checked again)` : '';
    let out = `${s(b.created)} new, ${s(b.existing)} already stored${rechecked}: ${s(byStatus.usable)} usable, ${s(byStatus.rejected)} rejected by the leakage check\n`;
    const bySource = Object.entries((b.bySource as Record<string, Row>) ?? {});
    if (bySource.length > 0) out += table(['source', 'usable', 'rejected'], bySource.map(([k, v]) => [k, s(v.usable), s(v.rejected)]));
    for (const skip of (b.skipped as Row[]) ?? []) out += `skipped ${s(skip.source)} ${s(skip.ref)}: ${s(skip.reason)}\n`;
    process.stdout.write(out);
  });
}
