import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { callApi, collect, errorLines, resolveTarget, targetOptions, type TargetFlags } from './target.ts';
import { cellText, fieldLines } from './format.ts';
import { table } from './table.ts';

const BATCH_MAX = 500;

interface SendFlags extends TargetFlags {
  file?: string;
  eventId?: string;
  kind?: string;
  outcome?: string;
  traceId?: string;
  sessionId?: string;
  turnId?: string;
  messageId?: string;
  model?: string;
  experiment?: string;
  arm?: string;
  rating?: string;
  comment?: string;
  source: string;
  reporter?: string;
  tag: string[];
  trainingConsent?: boolean;
  context?: string;
  occurredAt?: string;
  json?: boolean;
}

interface ListFlags extends TargetFlags {
  model?: string;
  rating?: string;
  source?: string;
  since?: string;
  until?: string;
  cursor?: string;
  limit?: string;
  json?: boolean;
}


interface ReportFlags extends TargetFlags {
  reportId?: string;
  title: string;
  body?: string;
  bodyFile?: string;
  severity: string;
  reporter?: string;
  source: string;
  link: string[];
  model: string;
  traceId?: string;
  tag: string[];
  trainingConsent?: boolean;
  repo?: string;
  commit?: string;
  occurredAt?: string;
  json?: boolean;
}

/** `flywheel feedback send|report|list`: the feedback API from the shell. */
export function registerFeedbackCommands(program: Command): void {
  const feedback = program.command('feedback').description('send and list feedback events, send reports');

  targetOptions(
    feedback
      .command('report')
      .description(
        'send a report (POST /v1/reports); only a report sent with --training-consent may be drafted into an eval case',
      )
      .requiredOption('--title <text>', 'one line')
      .option('--body <text>', 'what happened')
      .option('--body-file <path>', 'read the body from a file ("-" = stdin)')
      .requiredOption('--severity <s>', 'low | medium | high | critical')
      .requiredOption('--model <checkpoint>', 'checkpoint id the report is about')
      .option('--report-id <id>', 'idempotency key (default: a new UUID)')
      .option('--reporter <who>', 'who reports (default: $USER)')
      .option('--source <source>', 'internal | automated', 'internal')
      .option('--link <url>', 'a link (repeatable)', collect, [])
      .option('--trace-id <id>', 'a trace that shows the problem')
      .option('--tag <tag>', 'a label (repeatable)', collect, [])
      .option('--repo <url>', 'git repository the report is about')
      .option('--commit <sha>', 'commit of --repo')
      .option('--training-consent', 'the report may be used for training and drafted into an eval case (default: no)')
      .option('--occurred-at <iso>', 'when it happened')
      .option('--json', 'print the API answer as JSON'),
  ).action(async (flags: ReportFlags) => {
    const target = resolveTarget(flags);
    const body = flags.bodyFile !== undefined ? readFileSync(flags.bodyFile === '-' ? 0 : flags.bodyFile, 'utf8') : flags.body;
    const report: Record<string, unknown> = {
      reportId: flags.reportId ?? randomUUID(),
      title: flags.title,
      body,
      severity: flags.severity,
      reporter: flags.reporter ?? process.env.USER ?? 'cli',
      source: flags.source,
      model: flags.model,
      trainingConsent: flags.trainingConsent === true,
    };
    const optional = { traceId: flags.traceId, repo: flags.repo, commit: flags.commit, occurredAt: flags.occurredAt };
    for (const [name, value] of Object.entries(optional)) if (value !== undefined) report[name] = value;
    if (flags.link.length > 0) report.links = flags.link;
    if (flags.tag.length > 0) report.tags = flags.tag;
    // A missing body is left out, so the API names it in its 400.
    if (report.body === undefined) delete report.body;
    const { status, body: answer } = await callApi(target, 'POST', '/v1/reports', report);
    if (flags.json) {
      // The answer has a `status` of its own ("accepted"): the HTTP status is `httpStatus`.
      process.stdout.write(`${JSON.stringify({ httpStatus: status, ...(isObject(answer) ? answer : { body: answer }) }, null, 2)}\n`);
    } else if (status < 300) {
      const a = isObject(answer) ? answer : {};
      const rest = Object.entries(a).filter(([k]) => k !== 'status' && k !== 'reportId');
      process.stdout.write(`report ${cellText(a.reportId ?? report.reportId)}: ${cellText(a.status ?? 'sent')}\n${fieldLines(rest)}`);
    } else {
      for (const line of errorLines(answer, status)) process.stderr.write(`${line}\n`);
    }
    if (status >= 300) process.exitCode = 1;
  });

  targetOptions(
    feedback
      .command('send')
      .description('send one event from flags, or many from --file (JSON: an event, an array, or { events }); "-" reads stdin')
      .option('-f, --file <path>', 'JSON file with events ("-" = stdin); batches of 500 are sent')
      .option('--event-id <id>', 'idempotency key (default: a new UUID)')
      .option('--kind <kind>', 'rating | comment | outcome (default: rating, or comment when --comment is given)')
      .option('--outcome <outcome>', 'accepted | reverted | retried | corrected (kind outcome)')
      .option('--trace-id <id>', 'trace the feedback is about (default: cli-<event id>, a trace of its own)')
      .option('--session-id <id>', 'user session (default: cli-<reporter>)')
      .option('--turn-id <id>', 'turn inside the trace (default: 1)')
      .option('--message-id <id>', 'decision inside the trajectory')
      .option('--model <checkpoint>', 'checkpoint id')
      .option('--experiment <id>', 'experiment id')
      .option('--arm <arm>', 'experiment arm')
      .option('--rating <rating>', 'up | down | none')
      .option('--comment <text>', 'free text')
      .option('--source <source>', 'user | internal | automated', 'user')
      .option('--reporter <who>', 'who gave it (default: $USER)')
      .option('--tag <tag>', 'a label (repeatable)', collect, [])
      .option('--training-consent', 'the signal may be used for training (default: no)')
      .option('--context <json>', 'free JSON object')
      .option('--occurred-at <iso>', 'when it happened (default: now)')
      .option('--json', 'print the API answer as JSON'),
  ).action(async (flags: SendFlags) => {
    const target = resolveTarget(flags);
    const events = flags.file !== undefined ? readEvents(flags.file) : [eventFromFlags(flags)];
    let failed = false;
    for (let i = 0; i < events.length; i += BATCH_MAX) {
      const chunk = events.slice(i, i + BATCH_MAX);
      const body = events.length === 1 ? chunk[0] : { events: chunk };
      const { status, body: answer } = await callApi(target, 'POST', '/v1/feedback', body);
      if (flags.json) process.stdout.write(`${JSON.stringify({ status, ...(isObject(answer) ? answer : { body: answer }) }, null, 2)}\n`);
      else writeSendAnswer(status, answer, flags.file === undefined, i);
      if (status >= 300) failed = true;
    }
    if (failed) process.exitCode = 1;
  });

  targetOptions(
    feedback
      .command('list')
      .description('list stored feedback, newest first (the GET /v1/feedback filters)')
      .option('--model <checkpoint>', 'only this checkpoint')
      .option('--rating <rating>', 'up | down | none')
      .option('--source <source>', 'user | internal | automated')
      .option('--since <iso>', 'received at or after')
      .option('--until <iso>', 'received before')
      .option('--cursor <cursor>', 'page cursor from a previous call')
      .option('--limit <n>', 'page size')
      .option('--json', 'print the raw JSON page'),
  ).action(async (flags: ListFlags) => {
    const target = resolveTarget(flags);
    const params = new URLSearchParams();
    for (const name of ['model', 'rating', 'source', 'since', 'until', 'cursor', 'limit'] as const) {
      const value = flags[name];
      if (value !== undefined) params.set(name, value);
    }
    const query = params.size > 0 ? `?${params}` : '';
    const { status, body } = await callApi(target, 'GET', `/v1/feedback${query}`);
    if (status !== 200) {
      for (const line of errorLines(body, status)) process.stderr.write(`${line}\n`);
      process.exitCode = 1;
      return;
    }
    if (flags.json) return void process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    const page = body as { items?: Array<Record<string, unknown>>; cursor?: string; nextCursor?: string };
    const items = page.items ?? [];
    // Source and reporter are left to --json: the comment needs the room.
    const rows = items.map((item) => [
      cellText(item.eventId),
      cellText(item.kind),
      cellText(item.kind === 'outcome' ? item.outcome : item.rating),
      cellText(item.model),
      cellText(item.receivedAt).replace(/\.\d+Z$/, 'Z'),
      cellText(item.comment),
    ]);
    process.stdout.write(table(['eventId', 'kind', 'signal', 'model', 'received', 'comment'], rows));
    const next = page.cursor ?? page.nextCursor;
    process.stdout.write(`${items.length} item(s)${next ? `; next page: --cursor ${next}` : ''}\n`);
  });
}

function eventFromFlags(flags: SendFlags): Record<string, unknown> {
  const kind = flags.kind ?? (flags.outcome ? 'outcome' : flags.comment !== undefined && !flags.rating ? 'comment' : 'rating');
  const eventId = flags.eventId ?? randomUUID();
  const reporter = flags.reporter ?? process.env.USER ?? 'cli';
  // A person typing a comment has no agent trace at hand: the event gets a trace, session and turn of its own.
  const event: Record<string, unknown> = {
    eventId,
    kind,
    traceId: flags.traceId ?? `cli-${eventId}`,
    sessionId: flags.sessionId ?? `cli-${reporter}`,
    turnId: flags.turnId ?? '1',
    model: flags.model,
    source: flags.source,
    reporter,
    trainingConsent: flags.trainingConsent === true,
    occurredAt: flags.occurredAt ?? new Date().toISOString(),
  };
  const optional = { outcome: flags.outcome, messageId: flags.messageId, experiment: flags.experiment, arm: flags.arm, rating: flags.rating, comment: flags.comment };
  for (const [name, value] of Object.entries(optional)) if (value !== undefined) event[name] = value;
  if (flags.tag.length > 0) event.tags = flags.tag;
  if (flags.context !== undefined) event.context = JSON.parse(flags.context);
  // Missing required fields are left out, so the API names each of them in its 400.
  for (const [name, value] of Object.entries(event)) if (value === undefined) delete event[name];
  return event;
}

function readEvents(file: string): unknown[] {
  const text = readFileSync(file === '-' ? 0 : file, 'utf8');
  const parsed = JSON.parse(text) as unknown;
  if (Array.isArray(parsed)) return parsed;
  if (isObject(parsed) && Array.isArray(parsed.events)) return parsed.events as unknown[];
  return [parsed];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What `feedback send` prints for one POST: the counts, then each rejected event with its fields (by flag for an
 * event made from flags; by position, id and field for events from a file).
 */
function writeSendAnswer(status: number, answer: unknown, single: boolean, offset: number): void {
  const a = (isObject(answer) ? answer : {}) as { accepted?: number; duplicates?: number; rejected?: number; results?: Array<{ index: number; eventId?: string; status: string; issues?: Array<{ path: string; message: string }> }> };
  if (a.accepted === undefined) {
    for (const line of errorLines(answer, status)) process.stderr.write(`${line}\n`);
    return;
  }
  const stored = (a.results ?? []).filter((r) => r.status !== 'rejected').map((r) => r.eventId);
  process.stdout.write(`accepted ${a.accepted}, duplicates ${a.duplicates ?? 0}, rejected ${a.rejected ?? 0}${single && stored[0] ? ` (event ${stored[0]})` : ''}\n`);
  for (const r of (a.results ?? []).filter((x) => x.status === 'rejected')) {
    const issues = (r.issues ?? []).map((i) => ({ ...i, path: i.path.replace(/^events\[\d+\]\./, '') }));
    const lines = errorLines({ error: `event ${single ? '' : `#${offset + r.index} `}${r.eventId ?? ''}`.trim(), message: 'rejected', issues }, status, single ? undefined : null);
    for (const line of lines) process.stderr.write(`${line}\n`);
  }
}
