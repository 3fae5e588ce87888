/**
 * The record layout of failure modes, in one place so writers and readers agree. A signal key is
 * `feedback:<eventId>` or `report:<reportId>` (the two id spaces may overlap).
 *
 * | item | pk | sk | gsi1 | gsi2 |
 * | --- | --- | --- | --- | --- |
 * | current label of a signal | `MODESIGNAL#<signalKey>` | `LABEL` | | |
 * | label history | `MODESIGNAL#<signalKey>` | `HISTORY#<at>#<source>` | | |
 * | tally (one per signal: the counter row) | `MODETALLY#<model>#<day>` | `<signalKey>` | | |
 * | models seen | `MODEMODELS` | `<model>` | | |
 * | example of a mode | `MODEEX#<mode>` | `<receivedAt>#<signalKey>` | `MODEEXMODEL#<mode>#<model>` / `<receivedAt>#<signalKey>` | |
 * | suggested (unreviewed) mode of a signal | `MODESIGNAL#<signalKey>` | `SUGGESTED#<mode>` | `MODESUGGESTED#<mode>` / `<suggestedAt>#<signalKey>` | |
 * | review item | `MODEREVIEW#<signalKey>` | `ITEM` | `MODEREVIEWQ#<status>` / `<createdAt>#<signalKey>` | |
 * | training example (consented, judge or human) | `MODETRAIN#<signalKey>` | `EXAMPLE` | `MODETRAINING` / `<labelledAt>#<signalKey>` | |
 * | comment embedding | `MODEEMB#<signalKey>` | `VECTOR` | `MODEEMBDAY#<day>` / `<receivedAt>#<signalKey>` | |
 * | cluster (last clustering) | `MODECLUSTER#<id>` | `CLUSTER` | `MODECLUSTERS` / `<count, 10 digits>#<id>` | |
 * | promotion of a cluster (claimed once) | `MODECLUSTER#<id>` | `PROMOTION` | | |
 * | eval draft | `MODEDRAFT#<id>` | `DRAFT` | `MODEDRAFTS#<status>` / `<createdAt>#<id>` | |
 * | case made from a mode | `MODECASES#<mode>` | `<approvedAt>#<taskId>` | | |
 * | taxonomy version | `TAXONOMY` | `VERSION#<version, 10 digits>` | | |
 * | label mapping between versions | `TAXONOMY` | `MAPPING#<from, 10 digits>#<to, 10 digits>` | | |
 * | local pipeline's event cursor | `MODESLOCAL` | `EVENTCURSOR` | | |
 * | a checkpoint's counts of one day (timeline, overview) | `MODEROLLUP#<model>` | `<YYYY-MM-DD>` | | |
 *
 * Tallies are one row per signal, so counting is idempotent by construction: a redelivered `feedback.stored`
 * rewrites the same row instead of adding one.
 */
export const modeKeys = {
  label: (signalKey: string) => ({ pk: `MODESIGNAL#${signalKey}`, sk: 'LABEL' }),
  labelHistory: (signalKey: string, at: string, source: string) => ({ pk: `MODESIGNAL#${signalKey}`, sk: `HISTORY#${at}#${source}` }),
  tallyPartition: (model: string, day: string) => `MODETALLY#${model}#${day}`,
  models: 'MODEMODELS',
  examplePartition: (mode: string) => `MODEEX#${mode}`,
  example: (mode: string, receivedAt: string, signalKey: string) => ({ pk: `MODEEX#${mode}`, sk: `${receivedAt}#${signalKey}` }),
  /** gsi1 partition of a mode's examples from one checkpoint (examples written before this index existed lack it). */
  exampleByModel: (mode: string, model: string) => `MODEEXMODEL#${mode}#${model}`,
  suggestedLabel: (signalKey: string, mode: string) => ({ pk: `MODESIGNAL#${signalKey}`, sk: `SUGGESTED#${mode}` }),
  suggestedForMode: (mode: string) => `MODESUGGESTED#${mode}`,
  taxonomyMapping: (from: number, to: number) => ({ pk: 'TAXONOMY', sk: `MAPPING#${pad10(from)}#${pad10(to)}` }),
  review: (signalKey: string) => ({ pk: `MODEREVIEW#${signalKey}`, sk: 'ITEM' }),
  reviewQueue: (status: 'pending' | 'done') => `MODEREVIEWQ#${status}`,
  training: (signalKey: string) => ({ pk: `MODETRAIN#${signalKey}`, sk: 'EXAMPLE' }),
  trainingIndex: 'MODETRAINING',
  embedding: (signalKey: string) => ({ pk: `MODEEMB#${signalKey}`, sk: 'VECTOR' }),
  embeddingDay: (day: string) => `MODEEMBDAY#${day}`,
  cluster: (id: string) => ({ pk: `MODECLUSTER#${id}`, sk: 'CLUSTER' }),
  /** The promotion of a cluster: its own record, claimed with a conditional put, never rewritten by clustering. */
  clusterPromotion: (id: string) => ({ pk: `MODECLUSTER#${id}`, sk: 'PROMOTION' }),
  clusters: 'MODECLUSTERS',
  draft: (id: string) => ({ pk: `MODEDRAFT#${id}`, sk: 'DRAFT' }),
  drafts: (status: 'pending' | 'approved') => `MODEDRAFTS#${status}`,
  modeCase: (mode: string, approvedAt: string, taskId: string) => ({ pk: `MODECASES#${mode}`, sk: `${approvedAt}#${taskId}` }),
  modeCasesPartition: (mode: string) => `MODECASES#${mode}`,
  /** The mode a case partition (`MODECASES#<mode>`) names. */
  modeOfCasesPartition: (pk: string) => pk.slice('MODECASES#'.length),
  /** Where `npm start`'s failure-mode pipeline has read the local event log up to. */
  localEventCursor: { pk: 'MODESLOCAL', sk: 'EVENTCURSOR' },
  /** A checkpoint's failure-mode counts of one day (`mode-day-rollup.ts`); its days sort by date. */
  dayRollup: (model: string, day: string) => ({ pk: `MODEROLLUP#${model}`, sk: day }),
  dayRollupPartition: (model: string) => `MODEROLLUP#${model}`,
} as const;

/** The partition of every taxonomy version (the newest is one descending query). */
export const TAXONOMY_PK = 'TAXONOMY';
export const TAXONOMY_VERSION_PREFIX = 'VERSION#';

/** The sort key of one taxonomy version: zero-padded, so string order is numeric order. */
export function taxonomySortKey(version: number): string {
  return `${TAXONOMY_VERSION_PREFIX}${String(version).padStart(10, '0')}`;
}

export const modeBlobKeys = {
  /** The classifier the chain uses now: `{ modelVersion, key }`. */
  currentClassifier: 'modes/classifier/current.json',
  classifier: (modelVersion: string) => `modes/classifier/${modelVersion}.json`,
} as const;

/** Signal key of a feedback event or a report. */
export function signalKeyOf(kind: 'feedback' | 'report', id: string): string {
  return `${kind}:${id}`;
}

/** Zero-padded for string order = numeric order. */
export function pad10(n: number): string {
  return String(Math.max(0, Math.floor(n))).padStart(10, '0');
}
