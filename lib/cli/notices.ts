/**
 * `flywheel notices`: what Flywheel told people (failures once with their cause and link, stalled runs, decisions
 * waiting on someone, budgets crossed), newest first; `notices show ID` one of them; `notices ack ID` marks one seen;
 * `notices answer ID ACTION` takes a decision (the action's operation runs as its own route would).
 */
import type { Command } from 'commander';
import { cellText, fieldLines } from './format.ts';
import { table } from './table.ts';
import { callForCli, targetOptions, type JsonFlags } from './target.ts';

interface Flags extends JsonFlags {
  status?: string;
  kind?: string;
  severity?: string;
  limit?: string;
  cursor?: string;
  by?: string;
}

type Row = Record<string, unknown>;

function withJson(command: Command): Command {
  return targetOptions(command).option('--json', 'print the raw JSON answer');
}

/** A notice's page: what, why, the link, how often, who saw or answered it, the actions it offers. */
export function formatNotice(n: Row): string {
  const rows: Array<[string, unknown]> = [
    ['notice', n.noticeId],
    ['title', n.title],
    ['kind', `${cellText(n.kind)} (${cellText(n.severity)})`],
    ['status', n.status],
    ['raised', `${cellText(n.createdAt)}${Number(n.occurrences) > 1 ? `, ${cellText(n.occurrences)} times, last ${cellText(n.lastSeenAt)}` : ''}`],
  ];
  if (n.link) rows.push(['link', n.link]);
  const source = n.source as Row | undefined;
  if (source) rows.push(['about', [source.capability, source.runKind, source.runId].filter(Boolean).join(' ')]);
  for (const [k, v] of Object.entries((n.fields as Row | undefined) ?? {})) rows.push([k, v]);
  if (n.acknowledgedBy) rows.push(['acknowledged', `by ${cellText(n.acknowledgedBy)} at ${cellText(n.acknowledgedAt)}`]);
  const r = n.resolution as Row | undefined;
  if (r) rows.push(['resolved', `${r.actionId ? `${cellText(r.actionId)} ` : ''}by ${cellText(r.by)} at ${cellText(r.at)}: ${cellText(r.outcome)}`]);
  const delivery = n.delivery as Row;
  rows.push(['delivered', `slack ${cellText(delivery.slack)}, topic ${cellText(delivery.topic)}${delivery.deferredUntil ? `, waiting until ${cellText(delivery.deferredUntil)}` : ''}`]);
  const actions = (n.actions as Row[] | undefined) ?? [];
  if (actions.length > 0 && n.status !== 'resolved') rows.push(['actions', actions.map((a) => `${cellText(a.id)} (${cellText(a.label)})`).join(', ')]);
  return `${fieldLines(rows)}${n.text ? `\n${cellText(n.text)}\n` : ''}`;
}

/**
 * @example
 * registerNoticesCommands(program); // flywheel notices --status open --kind decision
 */
export function registerNoticesCommands(program: Command): void {
  const notices = program.command('notices').description('notices: failures, stalled runs, decisions waiting on someone, budgets crossed');

  withJson(
    notices
      .command('list', { isDefault: true })
      .description('notices, newest first')
      .option('--status <status>', 'open, acknowledged or resolved')
      .option('--kind <kind>', 'failure, stall, decision, budget or info')
      .option('--severity <severity>', 'info, warning or alert')
      .option('--limit <n>', 'at most this many', '50')
      .option('--cursor <cursor>', 'the page after this one (printed under a full page)'),
  ).action(async (flags: Flags) => {
    const q = new URLSearchParams();
    for (const name of ['status', 'kind', 'severity', 'limit', 'cursor'] as const) if (flags[name]) q.set(name, flags[name]);
    const page = await callForCli<{ notices: Row[]; nextCursor?: string }>(flags, 'GET', `/v1/notices?${q.toString()}`);
    if (!page) return;
    if (page.notices.length === 0) {
      process.stdout.write('No notices.\n');
      return;
    }
    process.stdout.write(
      table(
        ['notice', 'kind', 'status', 'title', 'times', 'last seen', 'actions'],
        page.notices.map((n) => [
          cellText(n.noticeId),
          `${cellText(n.kind)} ${cellText(n.severity)}`,
          cellText(n.status),
          cellText(n.title),
          cellText(n.occurrences),
          cellText(n.lastSeenAt).replace('T', ' ').slice(0, 16),
          n.status === 'resolved' ? '' : ((n.actions as Row[] | undefined) ?? []).map((a) => cellText(a.id)).join(' '),
        ]),
      ),
    );
    if (page.nextCursor) process.stdout.write(`(more: --cursor ${page.nextCursor})\n`);
  });

  withJson(notices.command('show <id>').description('one notice')).action(async (id: string, flags: Flags) => {
    const answer = await callForCli<{ notice: Row }>(flags, 'GET', `/v1/notices/${encodeURIComponent(id)}`);
    if (answer) process.stdout.write(formatNotice(answer.notice));
  });

  withJson(notices.command('ack <id>').description('mark a notice seen (repeats still fold in, and are not sent again)').option('--by <name>', 'who saw it; default the API key'))
    .action(async (id: string, flags: Flags) => {
      const answer = await callForCli<{ notice: Row }>(flags, 'POST', `/v1/notices/${encodeURIComponent(id)}/ack`, flags.by ? { by: flags.by } : {});
      if (answer) process.stdout.write(`${cellText(answer.notice.noticeId)} acknowledged by ${cellText(answer.notice.acknowledgedBy)}\n`);
    });

  withJson(notices.command('answer <id> <action>').description("take a decision notice's action (e.g. retire, ship, rollback, extend, approve, resume)").option('--by <name>', 'who decided; default the API key'))
    .action(async (id: string, action: string, flags: Flags) => {
      const answer = await callForCli<{ notice: Row; outcome: string }>(
        flags,
        'POST',
        `/v1/notices/${encodeURIComponent(id)}/actions/${encodeURIComponent(action)}`,
        flags.by ? { by: flags.by } : {},
      );
      if (answer) process.stdout.write(`${cellText(answer.notice.noticeId)} answered ${action}: ${answer.outcome}\n`);
    });
}
