/**
 * `/flywheel status`: the loop's state (`getLoopOverview`, the console's first page) as a compact Block Kit message:
 * feedback over the last day and week, failure modes and the review queue, checkpoints and incumbents, sweeps, suites,
 * training runs, experiments and open notices, one field each, with a link to the console when its address is known.
 *
 * @example
 * const { text, blocks } = statusBlocks(await getLoopOverview(ports), process.env.FLYWHEEL_CONSOLE_URL);
 * await slack.postMessage({ channel, text, blocks });
 */
import type { FeedbackWindow, LoopOverview } from '../../overview/schemas.ts';

const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);
const n = (x: number) => x.toLocaleString('en-US');

function feedbackText(w: FeedbackWindow): string {
  return `${n(w.events)} events · ${n(w.up)} :+1: ${n(w.down)} :-1: (${pct(w.negativeShare)} negative)`;
}

function names(items: readonly string[], max = 3): string {
  if (items.length === 0) return 'none';
  return `${items.slice(0, max).join(', ')}${items.length > max ? `, +${items.length - max}` : ''}`;
}

/**
 * @example
 * statusBlocks(overview); // { text: 'Flywheel status: 2 sweeps running, 1 training run, 3 open notices', blocks: [...] }
 */
export function statusBlocks(overview: LoopOverview, consoleUrl?: string): { text: string; blocks: unknown[] } {
  const o = overview;
  const field = (title: string, body: string) => ({ type: 'mrkdwn', text: `*${title}*\n${body}`.slice(0, 2000) });
  const fields = [
    field('Feedback, 24 h', feedbackText(o.feedback.last24h)),
    field('Feedback, 7 days', feedbackText(o.feedback.last7d)),
    field('Failure modes', `${n(o.failureModes.open)} open · top: ${names(o.failureModes.top.map((m) => `${m.mode} (${n(m.count)})`))}\nreview queue: ${n(o.failureModes.pendingReview)}${o.failureModes.pendingReviewCapped ? '+' : ''}`),
    field('Checkpoints', `${n(o.checkpoints.total)}${o.checkpoints.totalCapped ? '+' : ''} · incumbent: ${o.checkpoints.incumbent?.checkpoint ?? 'none'}${o.checkpoints.latest ? `\nlatest: ${o.checkpoints.latest.id}` : ''}`),
    field('Sweeps', `running: ${names(o.sweeps.running.map((s) => s.sweepId))}\nrecent: ${names(o.sweeps.recent.map((s) => `${s.sweepId} ${s.status}`), 2)}`),
    field('Suites', `${n(o.suites.active)} active · ${n(o.suites.saturated)} saturated`),
    field('Training runs', `running: ${names(o.trainingRuns.running.map((r) => `${r.runId} ${r.status}`))}\nrecent: ${names(o.trainingRuns.recent.map((r) => `${r.runId} ${r.status}`), 2)}`),
    field('Experiments', `running: ${names(o.experiments.running.map((e) => e.experimentId))}`),
    field('Notices', `${n(o.notices.open)} open · ${n(o.notices.decisions)} waiting for a decision`),
  ];
  const running = [
    `${o.sweeps.running.length} sweep${o.sweeps.running.length === 1 ? '' : 's'} running`,
    `${o.trainingRuns.running.length} training run${o.trainingRuns.running.length === 1 ? '' : 's'}`,
    `${o.notices.open} open notice${o.notices.open === 1 ? '' : 's'}`,
  ];
  const text = `Flywheel status: ${running.join(', ')}`;
  const context = [`as of ${o.generatedAt.slice(0, 16).replace('T', ' ')} UTC`];
  if (consoleUrl) context.push(`<${consoleUrl.replace(/#.*$/, '').replace(/\/+$/, '')}/|Open the console>`);
  return {
    text,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: 'Flywheel status', emoji: true } },
      { type: 'section', fields },
      { type: 'context', elements: [{ type: 'mrkdwn', text: context.join(' · ') }] },
    ],
  };
}
