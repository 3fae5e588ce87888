/**
 * Groups comment embeddings so recurring complaints surface, and flags the groups the taxonomy does not explain
 * well as candidate modes. Periodic (on demand, over a window): leader clustering in time order with a cosine
 * threshold (the first comment of a complaint leads its cluster, so a cluster's id, a hash of its leader, stays the
 * same as the window moves on), then one pass that moves each comment to its nearest centroid.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { toFieldIssues } from '../../shared/field-issues.ts';
import { ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { forEachLimited } from '../../shared/for-each-limited.ts';
import { clusterRecord, embeddingRecord } from '../record-codecs.ts';
import { modeKeys } from '../record-keys.ts';
import { readLabel } from '../write-label.ts';
import { decodeVector } from './embed-signal.ts';

const DAY_MS = 86_400_000;

export const ClustersQuery = z.strictObject({
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  threshold: z.coerce.number().min(0.3).max(0.999).default(0.8),
  minCount: z.coerce.number().int().min(2).max(1000).default(3),
  model: z.string().min(1).max(256).optional(),
});

interface Point {
  signalKey: string;
  model: string;
  receivedAt: string;
  text: string;
  modes: string[];
  labelSource: string;
  confidence: number;
  v: Float32Array;
}

function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  return v.map((x) => x / n);
}
function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length && i < b.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** Whether a member's label already explains it: a specific mode (not "other"), with some confidence. */
function explained(p: Point): boolean {
  return p.modes.some((m) => m !== 'other') && (p.labelSource === 'human' || p.confidence >= 0.5);
}

/**
 * @example
 * const { clusters } = await clusterComments(ports, { since: '2026-11-04T00:00:00Z' });
 * clusters.filter((c) => c.candidateMode).map((c) => c.examples[0].text);
 */
export async function clusterComments(ports: Pick<Ports, 'records' | 'now'>, query: unknown) {
  const q = ClustersQuery.safeParse(query ?? {});
  if (!q.success) throw new ValidationError('Invalid query', toFieldIssues(q.error.issues));
  const until = q.data.until ? new Date(q.data.until) : ports.now();
  const since = q.data.since ? new Date(q.data.since) : new Date(until.getTime() - 28 * DAY_MS);
  if (until.getTime() - since.getTime() > 92 * DAY_MS || until <= since) {
    throw new ValidationError('Invalid query', [{ path: 'since', message: 'must be before until, at most 92 days' }]);
  }
  const points: Point[] = [];
  for (let d = Date.UTC(since.getUTCFullYear(), since.getUTCMonth(), since.getUTCDate()); d <= until.getTime(); d += DAY_MS) {
    let cursor: string | undefined;
    do {
      const page = await ports.records.query({ index: 'gsi1', partition: modeKeys.embeddingDay(new Date(d).toISOString().slice(0, 10)), limit: 1000, ...(cursor ? { cursor } : {}) });
      for (const item of page.items) {
        const e = embeddingRecord.decode(item);
        if (e.receivedAt < since.toISOString() || e.receivedAt > until.toISOString()) continue;
        if (q.data.model !== undefined && e.model !== q.data.model) continue;
        points.push({
          signalKey: e.signalKey,
          model: e.model,
          receivedAt: e.receivedAt,
          text: e.text,
          modes: e.modes,
          labelSource: e.labelSource,
          confidence: e.confidence,
          v: normalise(decodeVector(e.vector)),
        });
      }
      cursor = page.cursor;
    } while (cursor);
  }
  // Labels move (a human relabels, a judge settles a review): explain members by their current label.
  await forEachLimited(points, 16, async (p) => {
    const label = await readLabel(ports, p.signalKey);
    if (!label) return;
    p.modes = label.modes.map((m) => m.mode);
    p.labelSource = label.source;
    p.confidence = label.confidence;
  });
  points.sort((a, b) => (a.receivedAt < b.receivedAt ? -1 : a.receivedAt > b.receivedAt ? 1 : a.signalKey < b.signalKey ? -1 : 1));

  // Leader pass.
  const leaders: { leader: Point; centroid: Float32Array }[] = [];
  for (const p of points) {
    let best = -1;
    let bestSim = q.data.threshold;
    leaders.forEach((l, i) => {
      const s = dot(p.v, l.leader.v);
      if (s >= bestSim) {
        bestSim = s;
        best = i;
      }
    });
    if (best < 0) leaders.push({ leader: p, centroid: p.v });
  }
  // Assignment pass: each point to its nearest leader (a point always matches its own leader with similarity 1).
  const members = leaders.map(() => [] as Point[]);
  for (const p of points) {
    let best = 0;
    let bestSim = -2;
    leaders.forEach((l, i) => {
      const s = dot(p.v, l.leader.v);
      if (s > bestSim) {
        bestSim = s;
        best = i;
      }
    });
    members[best]!.push(p);
  }
  const recentFrom = new Date(until.getTime() - 7 * DAY_MS).toISOString();
  const priorFrom = new Date(until.getTime() - 14 * DAY_MS).toISOString();
  const clusters = leaders
    .map((l, i) => {
      const ms = members[i]!;
      const dim = l.leader.v.length;
      const c = new Float32Array(dim);
      for (const m of ms) for (let d = 0; d < dim; d++) c[d]! += m.v[d]!;
      const centroid = normalise(c);
      const modeCounts: Record<string, number> = {};
      for (const m of ms) for (const mode of m.modes.length > 0 ? m.modes : ['(none)']) modeCounts[mode] = (modeCounts[mode] ?? 0) + 1;
      const explainedShare = ms.filter(explained).length / ms.length;
      const last7 = ms.filter((m) => m.receivedAt >= recentFrom).length;
      const prior7 = ms.filter((m) => m.receivedAt >= priorFrom && m.receivedAt < recentFrom).length;
      const direction: 'up' | 'down' | 'flat' = last7 > prior7 ? 'up' : last7 < prior7 ? 'down' : 'flat';
      const byDay: Record<string, number> = {};
      for (const m of ms) byDay[m.receivedAt.slice(0, 10)] = (byDay[m.receivedAt.slice(0, 10)] ?? 0) + 1;
      const examples = [...ms]
        .sort((a, b) => dot(b.v, centroid) - dot(a.v, centroid))
        .slice(0, 3)
        .map((m) => ({ signalKey: m.signalKey, model: m.model, receivedAt: m.receivedAt, text: m.text, modes: m.modes }));
      return {
        id: `cl-${createHash('sha256').update(l.leader.signalKey).digest('hex').slice(0, 12)}`,
        count: ms.length,
        firstSeen: ms[0]!.receivedAt,
        lastSeen: ms[ms.length - 1]!.receivedAt,
        trend: { last7Days: last7, previous7Days: prior7, direction },
        byDay,
        modes: modeCounts,
        explainedShare: Math.round(explainedShare * 100) / 100,
        /** Recurring and not well explained by the modes it was labelled with: a candidate for a new mode. */
        candidateMode: ms.length >= q.data.minCount && explainedShare < 0.5,
        models: [...new Set(ms.map((m) => m.model))],
        examples,
        signalKeys: ms.map((m) => m.signalKey),
      };
    })
    .filter((c) => c.count >= 2)
    .sort((a, b) => Number(b.candidateMode) - Number(a.candidateMode) || b.count - a.count);
  // Kept so eval drafts and people can refer to a cluster by id later.
  const computedAt = ports.now().toISOString();
  await ports.records.putMany(clusters.map((c) => clusterRecord.encode({ ...c, signalKeys: c.signalKeys.slice(0, 500), computedAt })));
  return {
    window: { since: since.toISOString(), until: until.toISOString() },
    threshold: q.data.threshold,
    comments: points.length,
    clusters: clusters.map(({ signalKeys, ...c }) => ({ ...c, size: signalKeys.length })),
  };
}
