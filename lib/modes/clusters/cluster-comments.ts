/**
 * Groups comment embeddings so recurring complaints surface, and flags the groups the taxonomy does not explain
 * well as candidate modes. Periodic (on demand, over a window).
 *
 * - Density clustering (HDBSCAN, `hdbscan.ts`, matching scikit-learn) over unit-length vectors, so no cosine cut
 *   that depends on the embedding model: a cluster is a region denser than its surroundings, the rest is noise.
 * - One embedding model at a time: vectors of another model are never mixed in. The query names it
 *   (`embeddingModel`); without one, the model of the newest embedding in the window is used, and the answer lists
 *   the other models seen so a caller can ask for them.
 * - Praise is not unexplained: positive signals (thumbs up, accepted outcomes) are left out of clustering.
 * - A cluster's id is a hash of the embedding model and its earliest member, so it stays the same as the window
 *   moves on while that member is in it.
 * - At most `CLUSTER_MAX_COMMENTS` comments, the newest: days are read newest first and reading stops once that many
 *   non-praise comments of the clustered model are in hand (`truncatedTo` says so; `embeddingModels` counts only
 *   what was read).
 * - A candidate mode has its members (texts only for those with training consent), its top terms (c-TF-IDF against
 *   the rest) and a suggested name; a person promotes it with `promoteCluster`, naming the `membersHash` shown
 *   (a promotion of a cluster whose members changed since is refused). A promotion lives in its own record: clustering
 *   again never erases it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { toFieldIssues } from '../../shared/field-issues.ts';
import { ConflictError, ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { forEachLimited } from '../../shared/for-each-limited.ts';
import { clusterPromotionRecord, clusterRecord, embeddingRecord } from '../record-codecs.ts';
import { modeKeys } from '../record-keys.ts';
import { loadSignalByKey } from '../signal.ts';
import { readLabel } from '../write-label.ts';
import { decodeVector } from './embed-signal.ts';
import { hdbscan } from './hdbscan.ts';
import { nameClusterWithModel } from './name-cluster.ts';
import { classTfidfTopTerms, suggestName } from './top-terms.ts';
import type { ModelsPort } from '../../ports/models.ts';

const DAY_MS = 86_400_000;
/**
 * Comments one clustering takes, the newest: a 5,000² distance matrix is 100 MB and ≈ 7–10 s on one core, inside the
 * API function's memory (512 MB) and API Gateway's 29 s.
 */
export const CLUSTER_MAX_COMMENTS = 5_000;
/** Members kept on a stored cluster record. */
const STORED_MEMBERS = 500;

export const ClustersQuery = z.strictObject({
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  /** HDBSCAN `min_cluster_size`: the smallest group that counts as a cluster. */
  minClusterSize: z.coerce.number().int().min(2).max(1000).default(5),
  /** HDBSCAN `min_samples` (default: minClusterSize). */
  minSamples: z.coerce.number().int().min(1).max(1000).optional(),
  /** Clusters at least this large and poorly explained are candidate modes. */
  minCount: z.coerce.number().int().min(2).max(1000).default(3),
  /** Only comments about this checkpoint. */
  model: z.string().min(1).max(256).optional(),
  /** The embedding model whose vectors are clustered (default: that of the newest embedding in the window). */
  embeddingModel: z.string().min(1).max(256).optional(),
  /** `model`: candidate modes (up to 10) are also named by the judge model, when one is given. */
  suggestNames: z.enum(['terms', 'model']).default('terms'),
});

/** Candidate modes a model names per clustering, at most. */
const MODEL_NAMED = 10;

interface Point {
  signalKey: string;
  model: string;
  embeddingModel: string;
  receivedAt: string;
  text: string;
  consented: boolean;
  positive: boolean;
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

const byTime = (a: Point, b: Point) => (a.receivedAt < b.receivedAt ? -1 : a.receivedAt > b.receivedAt ? 1 : a.signalKey < b.signalKey ? -1 : 1);

/** The id of a cluster: its embedding model and earliest member. */
export function clusterIdOf(embeddingModel: string, earliestSignalKey: string): string {
  return `cl-${createHash('sha256').update(`${embeddingModel}\n${earliestSignalKey}`).digest('hex').slice(0, 12)}`;
}

/**
 * A hash of a cluster's members (every signal key, in any order): `GET /v1/clusters` returns it, a promotion names
 * it, and the promotion is refused (409) when the cluster's members are no longer the ones the person saw.
 * @example
 * clusterMembersHash(['feedback:e1', 'feedback:e2']) === clusterMembersHash(['feedback:e2', 'feedback:e1']);
 */
export function clusterMembersHash(signalKeys: readonly string[]): string {
  return createHash('sha256').update([...signalKeys].sort().join('\n')).digest('hex').slice(0, 32);
}

/** Another writer kept changing a cluster record while clustering tried to store it (a 409; ask again). */
export class ClusterWriteConflictError extends ConflictError {
  constructor(clusterId: string) {
    super(`cluster ${clusterId} kept changing while it was being stored; ask again`);
  }
}

/**
 * @example
 * const r = await clusterComments(ports, { since: '2026-11-04T00:00:00Z', embeddingModel: 'bge-small' });
 * r.clusters.filter((c) => c.candidateMode).map((c) => [c.suggestedName.name, c.count]);
 */
export async function clusterComments(
  ports: Pick<Ports, 'records' | 'now'>,
  query: unknown,
  models: { namer?: ModelsPort; /** Cap on clustered comments (default `CLUSTER_MAX_COMMENTS`). */ maxComments?: number } = {},
) {
  const q = ClustersQuery.safeParse(query ?? {});
  if (!q.success) throw new ValidationError('Invalid query', toFieldIssues(q.error.issues));
  const until = q.data.until ? new Date(q.data.until) : ports.now();
  const since = q.data.since ? new Date(q.data.since) : new Date(until.getTime() - 28 * DAY_MS);
  if (until.getTime() - since.getTime() > 92 * DAY_MS || until <= since) {
    throw new ValidationError('Invalid query', [{ path: 'since', message: 'must be before until, at most 92 days' }]);
  }
  // Newest day first, newest comment first within a day; reading stops once `maxComments` non-praise comments of
  // the clustered embedding model are in hand, so a busy window costs no more than a quiet one.
  const maxComments = models.maxComments ?? CLUSTER_MAX_COMMENTS;
  const points: Point[] = [];
  let positives = 0;
  let truncated = false;
  let embeddingModel = q.data.embeddingModel;
  const modelsSeen = new Map<string, { count: number; newest: string }>();
  const sinceIso = since.toISOString();
  const untilIso = until.toISOString();
  const firstDay = Date.UTC(since.getUTCFullYear(), since.getUTCMonth(), since.getUTCDate());
  const lastDay = Date.UTC(until.getUTCFullYear(), until.getUTCMonth(), until.getUTCDate());
  days: for (let d = lastDay; d >= firstDay; d -= DAY_MS) {
    let cursor: string | undefined;
    do {
      const page = await ports.records.query({ index: 'gsi1', partition: modeKeys.embeddingDay(new Date(d).toISOString().slice(0, 10)), descending: true, limit: 1000, ...(cursor ? { cursor } : {}) });
      cursor = page.cursor;
      const fresh: Point[] = [];
      for (const item of page.items) {
        const e = embeddingRecord.decode(item);
        if (e.receivedAt < sinceIso || e.receivedAt > untilIso) continue;
        if (q.data.model !== undefined && e.model !== q.data.model) continue;
        const seen = modelsSeen.get(e.embeddingModel);
        modelsSeen.set(e.embeddingModel, { count: (seen?.count ?? 0) + 1, newest: seen && seen.newest > e.receivedAt ? seen.newest : e.receivedAt });
        // Without a model asked for, the newest embedding's model (the first one read) is the one clustered.
        embeddingModel ??= e.embeddingModel;
        if (e.embeddingModel !== embeddingModel) continue;
        fresh.push({
          signalKey: e.signalKey,
          model: e.model,
          embeddingModel: e.embeddingModel,
          receivedAt: e.receivedAt,
          text: e.text,
          consented: false,
          positive: false,
          modes: e.modes,
          labelSource: e.labelSource,
          confidence: e.confidence,
          v: normalise(decodeVector(e.vector)),
        });
      }
      // Labels move (a human relabels, a judge settles a review): explain members by their current label. Consent
      // and rating come from the signal itself.
      await forEachLimited(fresh, 16, async (p) => {
        const [label, signal] = await Promise.all([readLabel(ports, p.signalKey), loadSignalByKey(ports, p.signalKey)]);
        if (signal) {
          p.consented = signal.trainingConsent;
          p.positive = signal.rating === 'up' || signal.outcome === 'accepted';
        }
        if (!label) return;
        p.modes = label.modes.map((m) => m.mode);
        p.labelSource = label.source;
        p.confidence = label.confidence;
      });
      // Praise is not candidate-mode material.
      for (const p of fresh) {
        if (p.positive) {
          positives++;
          continue;
        }
        if (points.length === maxComments) {
          truncated = true;
          break days;
        }
        points.push(p);
      }
      if (points.length === maxComments && (cursor !== undefined || d > firstDay)) {
        truncated = true;
        break days;
      }
    } while (cursor);
  }
  points.sort(byTime);
  const dims = new Set(points.map((p) => p.v.length));
  if (dims.size > 1) {
    throw new ValidationError('Invalid query', [{ path: 'embeddingModel', message: `vectors of ${embeddingModel} have different lengths (${[...dims].join(', ')})` }]);
  }

  const { labels, probabilities } = hdbscan(
    points.map((p) => p.v),
    { minClusterSize: q.data.minClusterSize, ...(q.data.minSamples !== undefined ? { minSamples: q.data.minSamples } : {}) },
  );
  const groups = new Map<number, Point[]>();
  points.forEach((p, i) => {
    const l = labels[i]!;
    if (l >= 0) groups.set(l, [...(groups.get(l) ?? []), p]);
  });
  const strength = new Map(points.map((p, i) => [p.signalKey, probabilities[i]!]));
  const memberLists = [...groups.values()].map((ms) => ms.sort(byTime));
  const rest = points.filter((_, i) => labels[i]! < 0);
  const terms = classTfidfTopTerms(
    [...memberLists.map((ms) => ms.filter((m) => m.consented).map((m) => m.text)), rest.filter((m) => m.consented).map((m) => m.text)],
    8,
  );

  const recentFrom = new Date(until.getTime() - 7 * DAY_MS).toISOString();
  const priorFrom = new Date(until.getTime() - 14 * DAY_MS).toISOString();
  const clusters = memberLists
    .map((ms, i) => {
      const dim = ms[0]!.v.length;
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
      const examples = ms
        .filter((m) => m.consented)
        .sort((a, b) => dot(b.v, centroid) - dot(a.v, centroid))
        .slice(0, 3)
        .map((m) => ({ signalKey: m.signalKey, model: m.model, receivedAt: m.receivedAt, text: m.text, modes: m.modes }));
      const topTerms = terms[i]!;
      return {
        id: clusterIdOf(embeddingModel!, ms[0]!.signalKey),
        embeddingModel: embeddingModel!,
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
        topTerms,
        suggestedName: { ...suggestName(topTerms.map((t) => t.term)), by: 'terms' } as { name: string; id: string; by: 'terms' | 'model' },
        examples,
        members: ms.map((m) => ({
          signalKey: m.signalKey,
          receivedAt: m.receivedAt,
          membership: Math.round(strength.get(m.signalKey)! * 100) / 100,
          ...(m.consented ? { text: m.text } : {}),
        })),
        /** Name it when promoting (`promoteCluster`): the promotion is refused if the members changed since. */
        membersHash: clusterMembersHash(ms.map((m) => m.signalKey)),
        signalKeys: ms.map((m) => m.signalKey),
      };
    })
    .sort((a, b) => Number(b.candidateMode) - Number(a.candidateMode) || b.count - a.count || (a.id < b.id ? -1 : 1));
  if (q.data.suggestNames === 'model' && models.namer) {
    const namer = models.namer;
    await forEachLimited(
      clusters.filter((c) => c.candidateMode).slice(0, MODEL_NAMED),
      4,
      async (c) => {
        const named = await nameClusterWithModel(namer, { topTerms: c.topTerms.map((t) => t.term), texts: c.members.flatMap((m) => (m.text !== undefined ? [m.text] : [])) });
        if (named) c.suggestedName = { ...named, by: 'model' };
      },
    );
  }
  // Kept so eval drafts, promotion and people can refer to a cluster by id later. A promotion lives in its own record
  // (claimed once, never rewritten here); its copy on the cluster record is kept, and every write is conditional on
  // the revision read, so a promotion finishing meanwhile is not erased.
  const computedAt = ports.now().toISOString();
  const promoted = new Map<string, { mode: string; taxonomyVersion: number; promotedBy: string; promotedAt: string }>();
  await forEachLimited(clusters, 8, async (c) => {
    const key = modeKeys.cluster(c.id);
    const pkey = modeKeys.clusterPromotion(c.id);
    for (let attempt = 0; ; attempt++) {
      const [beforeItem, promotionItem] = await Promise.all([ports.records.get(key.pk, key.sk), ports.records.get(pkey.pk, pkey.sk)]);
      const before = clusterRecord.decodeIfPresent(beforeItem);
      const promotion = clusterPromotionRecord.decodeIfPresent(promotionItem);
      const done = promotion?.taxonomyVersion !== undefined && promotion.promotedAt !== undefined
        ? { mode: promotion.mode, taxonomyVersion: promotion.taxonomyVersion, promotedBy: promotion.promotedBy, promotedAt: promotion.promotedAt }
        : before?.promoted;
      if (done) promoted.set(c.id, done);
      const { written } = await ports.records.put(
        clusterRecord.encode({
          ...c,
          signalKeys: c.signalKeys.slice(0, STORED_MEMBERS),
          members: c.members.slice(0, STORED_MEMBERS).map(({ membership: _m, ...m }) => m),
          computedAt,
          revision: randomUUID(),
          ...(done ? { promoted: done } : {}),
        }),
        { condition: before ? { kind: 'unchanged', field: 'revision', value: before.revision } : { kind: 'absent' } },
      );
      if (written) return;
      if (attempt >= 5) throw new ClusterWriteConflictError(c.id);
    }
  });
  return {
    window: { since: since.toISOString(), until: until.toISOString() },
    algorithm: { name: 'hdbscan', minClusterSize: q.data.minClusterSize, minSamples: q.data.minSamples ?? q.data.minClusterSize, metric: 'euclidean on unit vectors' },
    embeddingModel: embeddingModel ?? null,
    /** Every embedding model with vectors in the window (only `embeddingModel`'s were clustered). */
    embeddingModels: Object.fromEntries([...modelsSeen].map(([m, s]) => [m, s.count])),
    comments: points.length,
    positivesExcluded: positives,
    noise: rest.length,
    ...(truncated ? { truncatedTo: maxComments } : {}),
    clusters: clusters.map(({ signalKeys, ...c }) => ({ ...c, size: signalKeys.length, ...(promoted.get(c.id) ? { promoted: promoted.get(c.id) } : {}) })),
  };
}
