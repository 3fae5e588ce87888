import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { callApi, collect, resolveTarget, targetOptions, type TargetFlags } from './target.ts';
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
      .option('--occurred-at <iso>', 'when it happened'),
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
    // The answer has a `status` of its own ("accepted"): the HTTP status is `httpStatus`.
    process.stdout.write(`${JSON.stringify({ httpStatus: status, ...(isObject(answer) ? answer : { body: answer }) }, null, 2)}\n`);
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
      .option('--trace-id <id>', 'trace the feedback is about')
      .option('--session-id <id>', 'user session')
      .option('--turn-id <id>', 'turn inside the trace')
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
      .option('--occurred-at <iso>', 'when it happened (default: now)'),
  ).action(async (flags: SendFlags) => {
    const target = resolveTarget(flags);
    const events = flags.file !== undefined ? readEvents(flags.file) : [eventFromFlags(flags)];
    let failed = false;
    for (let i = 0; i < events.length; i += BATCH_MAX) {
      const chunk = events.slice(i, i + BATCH_MAX);
      const body = events.length === 1 ? chunk[0] : { events: chunk };
      const { status, body: answer } = await callApi(target, 'POST', '/v1/feedback', body);
      process.stdout.write(`${JSON.stringify({ status, ...(isObject(answer) ? answer : { body: answer }) }, null, 2)}\n`);
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
    if (status !== 200 || flags.json) {
      process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
      if (status !== 200) process.exitCode = 1;
      return;
    }
    const page = body as { items?: Array<Record<string, unknown>>; cursor?: string; nextCursor?: string };
    const items = page.items ?? [];
    const columns = ['eventId', 'kind', 'rating', 'model', 'source', 'reporter', 'receivedAt'];
    process.stdout.write(table(columns, items.map((item) => columns.map((c) => cell(item[c])))));
    const next = page.cursor ?? page.nextCursor;
    process.stdout.write(`${items.length} item(s)${next ? `; next page: --cursor ${next}` : ''}\n`);
  });
}

function eventFromFlags(flags: SendFlags): Record<string, unknown> {
  const kind = flags.kind ?? (flags.outcome ? 'outcome' : flags.comment !== undefined && !flags.rating ? 'comment' : 'rating');
  const event: Record<string, unknown> = {
    eventId: flags.eventId ?? randomUUID(),
    kind,
    traceId: flags.traceId,
    sessionId: flags.sessionId,
    turnId: flags.turnId,
    model: flags.model,
    source: flags.source,
    reporter: flags.reporter ?? process.env.USER ?? 'cli',
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

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
