/**
 * A person adopts an emerging mode: a stored cluster (from `clusterComments`) becomes a mode of a new taxonomy
 * version.
 *
 * What promotion writes, in order (a retry after a crash finishes the same promotion, never makes a second version):
 * 1. taxonomy version n+1 = version n plus the new mode; its examples are the cluster's consented member texts
 *    (up to 5, nearest first as the cluster lists them) unless the request gives examples;
 * 2. a mapping record n → n+1 (`TAXONOMY` / `MAPPING#<n>#<n+1>`): every mode id of version n, live or retired and
 *    merged, maps to itself (or where it was merged) in n+1. Stored labels are immutable and keep the version they
 *    were made under; read through the mapping (or `resolveMode`) they mean the same in n+1;
 * 3. a suggested label per member of the cluster (up to its 500 stored members): `{ mode, taxonomyVersion: n+1,
 *    source: 'cluster', reviewed: false }` under the signal (`MODESIGNAL#<key>` / `SUGGESTED#<mode>`). A suggestion
 *    is not a label: counts, tallies, examples and the classifier's training set do not see it until a person labels
 *    the signal (the review queue's label route);
 * 4. the cluster record is marked `promoted` (a second promotion of it is a 409).
 *
 * A draft eval can then be made from the cluster (`POST /v1/eval-drafts { fromCluster }`): its record stays.
 */
import { z } from 'zod';
import { toFieldIssues } from '../../shared/field-issues.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { clusterRecord, suggestedLabelRecord, taxonomyMappingRecord } from '../record-codecs.ts';
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
});

/** Examples taken from a cluster's members. */
const PROMOTED_EXAMPLES = 5;

function noteFor(clusterId: string, by: string): string {
  return `promoted from cluster ${clusterId} by ${by}`;
}

/**
 * @example
 * const r = await promoteCluster(ports, 'cl-1a2b3c4d5e6f', {
 *   id: 'emoji-commit-messages', name: 'Emoji in commit messages',
 *   definition: 'The agent puts emojis in commit messages although the project does not want them.', promotedBy: 'ana',
 * });
 * // r.taxonomy.version === previous + 1; r.mapping.modes['scope-calibration'] === 'scope-calibration'
 * @throws NotFoundError (no such cluster), ConflictError (already promoted, or a concurrent revision won),
 *   ValidationError (bad body, an id already used, no consented text for examples).
 */
export async function promoteCluster(ports: Pick<Ports, 'records' | 'now'>, clusterId: string, body: unknown) {
  const r = PromoteClusterRequest.safeParse(body ?? {});
  if (!r.success) throw new ValidationError('Invalid promotion', toFieldIssues(r.error.issues));
  const req = r.data;
  const key = modeKeys.cluster(clusterId);
  const cluster = clusterRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  if (!cluster) throw new NotFoundError(`No cluster ${clusterId} (run GET /v1/clusters first)`);
  if (cluster.promoted) {
    throw new ConflictError(`cluster ${clusterId} was already promoted into ${cluster.promoted.mode} (taxonomy version ${cluster.promoted.taxonomyVersion})`);
  }
  const now = ports.now();
  const note = noteFor(clusterId, req.promotedBy);
  const newest = await ensureTaxonomy(ports.records);
  let next: Taxonomy;
  let prev: Taxonomy;
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
    await saveTaxonomy(ports.records, next);
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
  await ports.records.put(clusterRecord.encode({ ...cluster, promoted }));
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
