/**
 * A person adopts an emerging mode: a stored cluster (from `clusterComments`) becomes a mode of a new taxonomy
 * version.
 *
 * The request names the cluster's `membersHash` as `GET /v1/clusters` showed it: a cluster whose members changed
 * since (the id is its embedding model and earliest member, so members can come and go under one id) is a 409.
 *
 * What promotion writes, in order (a retry after a crash finishes the same promotion, never makes a second version):
 * 0. a claim: the cluster's promotion record (`MODECLUSTER#<id>` / `PROMOTION`), put only if absent, so of two
 *    promotions of one cluster exactly one goes on; the other gets a 409 before any taxonomy is saved;
 * 1. taxonomy version n+1 = version n plus the new mode; its examples are the cluster's consented member texts
 *    (up to 5, nearest first as the cluster lists them) unless the request gives examples;
 * 2. a mapping record n → n+1 (`TAXONOMY` / `MAPPING#<n>#<n+1>`): every mode id of version n, live or retired and
 *    merged, maps to itself (or where it was merged) in n+1. Stored labels are immutable and keep the version they
 *    were made under; read through the mapping (or `resolveMode`) they mean the same in n+1;
 * 3. a suggested label per member of the cluster (up to its 500 stored members): `{ mode, taxonomyVersion: n+1,
 *    source: 'cluster', reviewed: false }` under the signal (`MODESIGNAL#<key>` / `SUGGESTED#<mode>`). A suggestion
 *    is not a label: counts, tallies, examples and the classifier's training set do not see it until a person labels
 *    the signal (the review queue's label route);
 * 4. the promotion record is marked done, and the cluster record gets a copy as `promoted` (written over the
 *    revision read, so clustering meanwhile cannot erase it; clustering keeps it from the promotion record anyway).
 *
 * A draft eval can then be made from the cluster (`POST /v1/eval-drafts { fromCluster }`): its record stays.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { toFieldIssues } from '../../shared/field-issues.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { clusterPromotionRecord, clusterRecord, suggestedLabelRecord, taxonomyMappingRecord } from '../record-codecs.ts';
import { modeKeys } from '../record-keys.ts';
import { ensureTaxonomy, loadTaxonomy, saveTaxonomy } from './taxonomy-store.ts';
import { ModeDefinition, ModeId, resolveMode, reviseTaxonomy, type Taxonomy } from './taxonomy.ts';

/** `POST /v1/clusters/{id}/promote`. */
export const PromoteClusterRequest = z.strictObject({
  /** The new mode's id (kebab-case; never a live or retired id). */
  id: ModeId,
  name: ModeDefinition.shape.name,
  definition: ModeDefinition.shape.definition,
  /** Who adopts the mode (kept on the mapping and every suggestion). */
  promotedBy: z.string().min(1).max(256),
  /** Examples of the mode; default: the cluster's consented member texts. */
  examples: ModeDefinition.shape.examples.optional(),
  /** The cluster's `membersHash` as `GET /v1/clusters` showed it: the members the person saw. */
  membersHash: z.string().min(1).max(128),
});

/** Examples taken from a cluster's members. */
const PROMOTED_EXAMPLES = 5;

/** The cluster was promoted already, or another promotion of it is under way. */
export class ClusterAlreadyPromotedError extends ConflictError {}
/** The cluster's members are not the ones the promotion names (`membersHash`): cluster again and look again. */
export class ClusterChangedError extends ConflictError {}

function noteFor(clusterId: string, by: string): string {
  return `promoted from cluster ${clusterId} by ${by}`;
}

/**
 * @example
 * const r = await promoteCluster(ports, 'cl-1a2b3c4d5e6f', {
 *   id: 'emoji-commit-messages', name: 'Emoji in commit messages',
 *   definition: 'The agent puts emojis in commit messages although the project does not want them.', promotedBy: 'ana',
 *   membersHash: cluster.membersHash, // from GET /v1/clusters
 * });
 * // r.taxonomy.version === previous + 1; r.mapping.modes['scope-calibration'] === 'scope-calibration'
 * @throws NotFoundError (no such cluster), ConflictError (already promoted or being promoted, members changed since
 *   `membersHash`, or a concurrent revision won),
 *   ValidationError (bad body, an id already used, no consented text for examples).
 */
export async function promoteCluster(ports: Pick<Ports, 'records' | 'now'>, clusterId: string, body: unknown) {
  const r = PromoteClusterRequest.safeParse(body ?? {});
  if (!r.success) throw new ValidationError('Invalid promotion', toFieldIssues(r.error.issues));
  const req = r.data;
  const key = modeKeys.cluster(clusterId);
  const cluster = clusterRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  if (!cluster) throw new NotFoundError(`No cluster ${clusterId} (run GET /v1/clusters first)`);
  const pkey = modeKeys.clusterPromotion(clusterId);
  const sameRequest = (p: { mode: string; promotedBy: string; membersHash: string }) =>
    p.mode === req.id && p.promotedBy === req.promotedBy && p.membersHash === req.membersHash;
  const refuse = (p: { mode: string; taxonomyVersion?: number | undefined }) =>
    new ClusterAlreadyPromotedError(
      p.taxonomyVersion !== undefined
        ? `cluster ${clusterId} was already promoted into ${p.mode} (taxonomy version ${p.taxonomyVersion})`
        : `cluster ${clusterId} is being promoted into ${p.mode} by another request`,
    );
  let claim = clusterPromotionRecord.decodeIfPresent(await ports.records.get(pkey.pk, pkey.sk));
  if (!claim && cluster.promoted) throw refuse(cluster.promoted);
  if (claim && (claim.taxonomyVersion !== undefined || !sameRequest(claim))) throw refuse(claim);
  if (!claim && cluster.membersHash !== req.membersHash) {
    throw new ClusterChangedError(
      `cluster ${clusterId}'s members changed since membersHash ${req.membersHash} was shown (now ${cluster.membersHash ?? 'unknown'}): list the clusters again and look again`,
    );
  }
  const now = ports.now();
  const note = noteFor(clusterId, req.promotedBy);
  const newest = await ensureTaxonomy(ports.records);
  let next: Taxonomy;
  let prev: Taxonomy;
  let save = false;
  if (newest.note === note && newest.modes.some((m) => m.id === req.id) && newest.parentVersion !== undefined) {
    // A retry after a crash: the version is already stored, finish the rest.
    next = newest;
    prev = await loadTaxonomy(ports.records, newest.parentVersion);
  } else {
    const texts = (cluster.members ?? []).flatMap((m) => (m.text !== undefined ? [m.text.slice(0, 1000)] : []));
    const examples = req.examples ?? [...new Set([...cluster.examples.map((e) => e.text.slice(0, 1000)), ...texts])].slice(0, PROMOTED_EXAMPLES);
    if (examples.length === 0) {
      throw new ValidationError('Invalid promotion', [{ path: 'examples', message: 'the cluster has no member with training consent: give examples' }]);
    }
    prev = newest;
    next = reviseTaxonomy(prev, { add: [{ id: req.id, name: req.name, definition: req.definition, examples }], note }, now);
    save = true;
  }
  // Claimed once, before the taxonomy is saved: of two promotions of this cluster, the second stops here.
  let claimedNow = false;
  if (!claim) {
    const mine = { clusterId, mode: req.id, membersHash: req.membersHash, promotedBy: req.promotedBy, claimedAt: now.toISOString() };
    claimedNow = (await ports.records.put(clusterPromotionRecord.encode(mine), { condition: { kind: 'absent' } })).written;
    if (claimedNow) claim = mine;
    else {
      const other = clusterPromotionRecord.decode((await ports.records.get(pkey.pk, pkey.sk))!);
      if (other.taxonomyVersion !== undefined || !sameRequest(other)) throw refuse(other);
      claim = other;
    }
  }
  if (save) {
    try {
      await saveTaxonomy(ports.records, next);
    } catch (e) {
      // Nothing of this promotion is stored: let the cluster be promoted again (by this request retried or another).
      if (claimedNow) await ports.records.delete(pkey.pk, pkey.sk);
      throw e;
    }
  }
  const at = now.toISOString();
  const mapping = labelMapping(prev, next);
  const members = cluster.signalKeys;
  await ports.records.putMany(
    members.map((signalKey) =>
      suggestedLabelRecord.encode({
        signalKey,
        mode: req.id,
        taxonomyVersion: next.version,
        source: 'cluster',
        clusterId,
        ...(cluster.embeddingModel ? { embeddingModel: cluster.embeddingModel } : {}),
        reviewed: false,
        suggestedBy: req.promotedBy,
        suggestedAt: at,
      }),
    ),
  );
  const mappingRecord = {
    fromVersion: prev.version,
    toVersion: next.version,
    modes: mapping,
    added: [{ mode: req.id, fromCluster: clusterId }],
    suggestedLabels: members.length,
    createdBy: req.promotedBy,
    createdAt: at,
  };
  await ports.records.put(taxonomyMappingRecord.encode(mappingRecord));
  const promoted = { mode: req.id, taxonomyVersion: next.version, promotedBy: req.promotedBy, promotedAt: at };
  await ports.records.put(clusterPromotionRecord.encode({ ...claim, taxonomyVersion: next.version, promotedAt: at }));
  // A copy on the cluster record (eval drafts read it), written over the revision read.
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = clusterRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
    if (!current || current.promoted) break;
    const { written } = await ports.records.put(clusterRecord.encode({ ...current, promoted, revision: randomUUID() }), {
      condition: { kind: 'unchanged', field: 'revision', value: current.revision },
    });
    if (written) break;
  }
  return {
    clusterId,
    taxonomy: { version: next.version, parentVersion: prev.version, mode: next.modes.find((m) => m.id === req.id)! },
    mapping: mappingRecord,
    suggestedLabels: { mode: req.id, taxonomyVersion: next.version, reviewed: false, count: members.length },
    promoted,
  };
}

/** Every mode id of `prev` (live, and retired ones that resolve) → its id in `next`. */
export function labelMapping(prev: Taxonomy, next: Taxonomy): Record<string, string> {
  const out: Record<string, string> = {};
  for (const id of [...prev.modes.map((m) => m.id), ...prev.retired.map((m) => m.id)]) {
    const to = resolveMode(next, id);
    if (to !== undefined) out[id] = to;
  }
  return out;
}

/** The mapping from one taxonomy version to the next, if a promotion wrote one. */
export async function loadTaxonomyMapping(records: RecordsPort, fromVersion: number, toVersion: number) {
  const k = modeKeys.taxonomyMapping(fromVersion, toVersion);
  return taxonomyMappingRecord.decodeIfPresent(await records.get(k.pk, k.sk));
}

/**
 * The unreviewed suggestions of a mode, newest first.
 * @example
 * const { items } = await listSuggestedLabels(ports.records, 'emoji-commit-messages');
 */
export async function listSuggestedLabels(records: RecordsPort, mode: string, cursor?: string) {
  const page = await records.query({ index: 'gsi1', partition: modeKeys.suggestedForMode(mode), descending: true, limit: 200, ...(cursor ? { cursor } : {}) });
  return { items: page.items.map((i) => suggestedLabelRecord.decode(i)), ...(page.cursor ? { cursor: page.cursor } : {}) };
}
