/**
 * Failure-mode counts per checkpoint over a window, with rates per thousand turns and the trend against the window
 * before it; several checkpoints side by side. Read from the tally rows (one per signal, so redeliveries never
 * double count); a vote replaced by a newer one under the same feedbackKey counts once, as its newest vote.
 *
 * Turns: there is no served-turn metric in the platform yet, so the denominator is the number of distinct turns
 * (`traceId:turnId`) that produced any signal in the window (ratings, comments, outcomes): "per thousand turns with
 * feedback". Implicit outcomes (accepted, reverted, retried, corrected) and ratings are counted beside the modes.
 *
 * Each mode's count is split by how sure its labels are (`byLabel`): `people` (a person labelled it), `confident`
 * (the local classifier or the judge, at confidence ≥ `CONFIDENT_LABEL` and not waiting for a person) and
 * `unreviewed` (guesses: below that confidence, or in the pending review queue). `count` is their sum.
 */
import { z } from 'zod';
import { toFieldIssues } from '../shared/field-issues.ts';
import { ValidationError } from '../errors.ts';
import type { Ports } from '../ports/ports.ts';
import { forEachLimited } from '../shared/for-each-limited.ts';
import { modelSeenRecord, reviewItemRecord, tallyRecord, type StoredTally } from './record-codecs.ts';
import { modeKeys } from './record-keys.ts';
import { ensureTaxonomy } from './taxonomy/taxonomy-store.ts';

const DAY_MS = 86_400_000;
export const MAX_WINDOW_DAYS = 92;
const MODEL_LIST = /^[A-Za-z0-9._:@+=\/-]+(,[A-Za-z0-9._:@+=\/-]+)*$/;

export const FailureModesQuery = z.strictObject({
  model: z.string().max(2000).regex(MODEL_LIST, { message: 'one checkpoint id or several separated by commas' }).optional(),
  compare: z.string().max(2000).regex(MODEL_LIST, { message: 'checkpoint ids separated by commas' }).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
});

export const TURNS_BASIS = 'distinct turns (traceId:turnId) with any signal in the window';

/** A model's label at or above this confidence, not waiting for review, counts as a confident prediction. */
export const CONFIDENT_LABEL = 0.6;

/** How a mode's count splits by who labelled and how sure: people's labels, confident predictions, unreviewed guesses. */
export interface LabelKinds {
  people: number;
  confident: number;
  unreviewed: number;
}

export interface ModeCount {
  mode: string;
  count: number;
  /** `count` split: people's labels, confident predictions, unreviewed guesses. */
  byLabel: LabelKinds;
  perThousandTurns: number;
  previousCount: number;
  previousPerThousandTurns: number;
  trend: 'up' | 'down' | 'flat' | 'new' | 'gone';
  /** Relative change of the rate against the previous window (null when it was 0). */
  change: number | null;
}

export interface WindowTotals {
  signals: number;
  turns: number;
  ratings: { up: number; down: number; none: number };
  outcomes: { accepted: number; reverted: number; retried: number; corrected: number };
  reports: number;
  labelled: Record<string, number>;
  /** Signals with at least one mode, split like each mode's count. */
  labelKinds: LabelKinds;
  withoutMode: number;
}

export interface CheckpointModes {
  model: string;
  totals: WindowTotals;
  previous: WindowTotals;
  /** Positive ratings per thousand turns: the good news, counted the same way. */
  upPerThousandTurns: number;
  modes: ModeCount[];
}

async function tallies(ports: Pick<Ports, 'records'>, model: string, from: Date, to: Date): Promise<StoredTally[]> {
  const out: StoredTally[] = [];
  const fromIso = from.toISOString();
  const toIso = to.toISOString();
  for (let d = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()); d <= to.getTime(); d += DAY_MS) {
    const day = new Date(d).toISOString().slice(0, 10);
    let cursor: string | undefined;
    do {
      const page = await ports.records.query({ partition: modeKeys.tallyPartition(model, day), limit: 1000, ...(cursor ? { cursor } : {}) });
      for (const item of page.items) {
        const tally = tallyRecord.decode(item);
        if (tally.receivedAt >= fromIso && tally.receivedAt <= toIso) out.push(tally);
      }
      cursor = page.cursor;
    } while (cursor);
  }
  // One vote per feedbackKey: the newest.
  const byVote = new Map<string, StoredTally>();
  const rest: StoredTally[] = [];
  for (const t of out) {
    if (!t.feedbackKey) {
      rest.push(t);
      continue;
    }
    const seen = byVote.get(t.feedbackKey);
    if (!seen || seen.receivedAt < t.receivedAt || (seen.receivedAt === t.receivedAt && seen.signalKey < t.signalKey)) byVote.set(t.feedbackKey, t);
  }
  return [...rest, ...byVote.values()];
}

/** Which kind of label a tally row carries. */
export function labelKindOf(row: Pick<StoredTally, 'source' | 'confidence' | 'signalKey'>, pendingReview: ReadonlySet<string>): keyof LabelKinds {
  if (row.source === 'human') return 'people';
  if (row.source !== 'none' && row.confidence >= CONFIDENT_LABEL && !pendingReview.has(row.signalKey)) return 'confident';
  return 'unreviewed';
}

/**
 * Of these rows, the signal keys waiting in the review queue. Only a row that would count as confident can change
 * kind, so only those are looked up, each by its review item's key: the cost follows the window read, never the
 * size of the whole pending queue.
 */
async function pendingReviews(ports: Pick<Ports, 'records'>, rows: readonly StoredTally[]): Promise<Set<string>> {
  const candidates = [...new Set(rows.filter((r) => r.source !== 'human' && r.source !== 'none' && r.confidence >= CONFIDENT_LABEL && r.modes.length > 0).map((r) => r.signalKey))];
  const out = new Set<string>();
  await forEachLimited(candidates, 16, async (signalKey) => {
    const k = modeKeys.review(signalKey);
    const item = reviewItemRecord.decodeIfPresent(await ports.records.get(k.pk, k.sk));
    if (item?.status === 'pending') out.add(signalKey);
  });
  return out;
}

function totalsOf(rows: StoredTally[], pendingReview: ReadonlySet<string>): { totals: WindowTotals; byMode: Map<string, number>; kinds: Map<string, LabelKinds> } {
  const turns = new Set<string>();
  const totals: WindowTotals = {
    signals: rows.length,
    turns: 0,
    ratings: { up: 0, down: 0, none: 0 },
    outcomes: { accepted: 0, reverted: 0, retried: 0, corrected: 0 },
    reports: 0,
    labelled: {},
    labelKinds: { people: 0, confident: 0, unreviewed: 0 },
    withoutMode: 0,
  };
  const byMode = new Map<string, number>();
  const kinds = new Map<string, LabelKinds>();
  for (const r of rows) {
    if (r.turn) turns.add(r.turn);
    totals.ratings[r.rating]++;
    if (r.outcome) totals.outcomes[r.outcome]++;
    if (r.signalKind === 'report') totals.reports++;
    totals.labelled[r.source] = (totals.labelled[r.source] ?? 0) + 1;
    if (r.modes.length === 0) totals.withoutMode++;
    const kind = labelKindOf(r, pendingReview);
    if (r.modes.length > 0) totals.labelKinds[kind]++;
    for (const m of r.modes) {
      byMode.set(m, (byMode.get(m) ?? 0) + 1);
      const k = kinds.get(m) ?? { people: 0, confident: 0, unreviewed: 0 };
      k[kind]++;
      kinds.set(m, k);
    }
  }
  totals.turns = turns.size;
  return { totals, byMode, kinds };
}

const perThousand = (n: number, turns: number) => (turns === 0 ? 0 : Math.round((n / turns) * 1000 * 100) / 100);

function trendOf(now: number, before: number): { trend: ModeCount['trend']; change: number | null } {
  if (before === 0) return { trend: now > 0 ? 'new' : 'flat', change: null };
  if (now === 0) return { trend: 'gone', change: -1 };
  const change = Math.round(((now - before) / before) * 1000) / 1000;
  return { trend: change > 0.1 ? 'up' : change < -0.1 ? 'down' : 'flat', change };
}

/**
 * @example
 * const r = await queryFailureModes(ports, { model: 'ckpt-a,ckpt-b', since: '2026-11-25T00:00:00Z' });
 * r.checkpoints[0].modes.find((m) => m.mode === 'scope-calibration')?.perThousandTurns;
 */
export async function queryFailureModes(ports: Pick<Ports, 'records' | 'now'>, query: unknown) {
  const q = FailureModesQuery.safeParse(query ?? {});
  if (!q.success) throw new ValidationError('Invalid query', toFieldIssues(q.error.issues));
  const until = q.data.until ? new Date(q.data.until) : ports.now();
  const since = q.data.since ? new Date(q.data.since) : new Date(until.getTime() - 7 * DAY_MS);
  const span = until.getTime() - since.getTime();
  const issues = [];
  if (span <= 0) issues.push({ path: 'since', message: 'must be before until' });
  if (span > MAX_WINDOW_DAYS * DAY_MS) issues.push({ path: 'since', message: `the window may span at most ${MAX_WINDOW_DAYS} days` });
  if (issues.length > 0) throw new ValidationError('Invalid query', issues);
  let models = [...new Set([...(q.data.model?.split(',') ?? []), ...(q.data.compare?.split(',') ?? [])])];
  if (models.length === 0) {
    const page = await ports.records.query({ partition: modeKeys.models, limit: 50 });
    models = page.items.map((item) => modelSeenRecord.decode(item).model);
  }
  if (models.length > 10) throw new ValidationError('Invalid query', [{ path: 'model', message: 'at most 10 checkpoints at once' }]);
  const taxonomy = await ensureTaxonomy(ports.records);
  const prevSince = new Date(since.getTime() - span);
  const prevUntil = new Date(since.getTime() - 1);
  const checkpoints: CheckpointModes[] = [];
  for (const model of models) {
    const nowRows = await tallies(ports, model, since, until);
    const beforeRows = await tallies(ports, model, prevSince, prevUntil);
    const pending = await pendingReviews(ports, [...nowRows, ...beforeRows]);
    const now = totalsOf(nowRows, pending);
    const before = totalsOf(beforeRows, pending);
    const ids = [...new Set([...taxonomy.modes.map((m) => m.id), ...now.byMode.keys(), ...before.byMode.keys()])];
    const modes = ids.map((mode) => {
      const count = now.byMode.get(mode) ?? 0;
      const previousCount = before.byMode.get(mode) ?? 0;
      const rate = perThousand(count, now.totals.turns);
      const prevRate = perThousand(previousCount, before.totals.turns);
      const byLabel = now.kinds.get(mode) ?? { people: 0, confident: 0, unreviewed: 0 };
      return { mode, count, byLabel, perThousandTurns: rate, previousCount, previousPerThousandTurns: prevRate, ...trendOf(rate, prevRate) };
    });
    checkpoints.push({ model, totals: now.totals, previous: before.totals, upPerThousandTurns: perThousand(now.totals.ratings.up, now.totals.turns), modes });
  }
  const comparison =
    checkpoints.length >= 2
      ? checkpoints[0]!.modes.map((m) => ({
          mode: m.mode,
          perThousandTurns: Object.fromEntries(checkpoints.map((c) => [c.model, c.modes.find((x) => x.mode === m.mode)?.perThousandTurns ?? 0])),
          counts: Object.fromEntries(checkpoints.map((c) => [c.model, c.modes.find((x) => x.mode === m.mode)?.count ?? 0])),
          /** Rate of the second checkpoint minus the first. */
          difference: Math.round(((checkpoints[1]!.modes.find((x) => x.mode === m.mode)?.perThousandTurns ?? 0) - m.perThousandTurns) * 100) / 100,
        }))
      : undefined;
  return {
    window: { since: since.toISOString(), until: until.toISOString() },
    previousWindow: { since: prevSince.toISOString(), until: prevUntil.toISOString() },
    taxonomyVersion: taxonomy.version,
    turnsBasis: TURNS_BASIS,
    checkpoints,
    ...(comparison ? { comparison } : {}),
  };
}
