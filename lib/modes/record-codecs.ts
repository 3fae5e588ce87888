/**
 * The stored records of failure modes, one codec per kind (keys from `record-keys.ts`): writers `encode`, readers
 * `decode`, and a record that does not match its kind fails where it is read, naming the record and the field. The
 * two signal views read the feedback capability's records (events, reports) as the chain needs them.
 */
import { z } from 'zod';
import { StoredFeedbackEvent, StoredReport } from '../feedback/record-codecs.ts';
import { utcDay } from '../feedback/record-keys.ts';
import { Outcome, Rating } from '../feedback/schemas.ts';
import { defineRecordCodec, defineRecordView } from '../shared/record-codec.ts';
import { SEVERITIES } from './judge-signal.ts';
import { LabelledMode, LabelSource, ModeLabel, ReviewReason } from './mode-label.ts';
import { modeKeys, pad10, TAXONOMY_PK, taxonomySortKey } from './record-keys.ts';
import { Taxonomy } from './taxonomy/taxonomy.ts';
import { TaskBehaviourSchema } from '../harness/task/behaviour-schema.ts';

/** What kind of signal a row is about: the feedback event's kind, or `report`. */
const SignalKind = z.enum(['rating', 'comment', 'outcome', 'report']);

/** A feedback event as the chain reads it; its comment may be anything (a client that bypassed the schema). */
export const feedbackSignalView = defineRecordView({
  kind: 'feedback event',
  schema: StoredFeedbackEvent.pick({
    eventId: true,
    feedbackKey: true,
    kind: true,
    outcome: true,
    traceId: true,
    turnId: true,
    model: true,
    rating: true,
    trainingConsent: true,
    context: true,
    trajectory: true,
    receivedAt: true,
  }).extend({ comment: z.unknown().optional() }),
});

/** A report as the chain reads it; its title and body may be anything. */
export const reportSignalView = defineRecordView({
  kind: 'report',
  schema: StoredReport.pick({ reportId: true, severity: true, model: true, traceId: true, trainingConsent: true, receivedAt: true, repo: true, commit: true }).extend({
    title: z.unknown().optional(),
    body: z.unknown().optional(),
  }),
});

/** The current label of a signal. */
export const modeLabelRecord = defineRecordCodec({
  kind: 'mode label',
  schema: ModeLabel,
  keys: (l) => modeKeys.label(l.signalKey),
});

/** Every label a signal had, by time and source. */
export const labelHistoryRecord = defineRecordCodec({
  kind: 'mode label history',
  schema: ModeLabel,
  keys: (l) => modeKeys.labelHistory(l.signalKey, l.labelledAt, l.source),
});

/** The counter row of a signal: what the failure-mode counts read. */
export const StoredTally = z.object({
  signalKey: z.string(),
  model: z.string(),
  day: z.string(),
  receivedAt: z.string(),
  signalKind: SignalKind,
  rating: Rating,
  outcome: Outcome.optional(),
  turn: z.string().optional(),
  feedbackKey: z.string().optional(),
  modes: z.array(z.string()),
  source: LabelSource,
  confidence: z.number(),
});
export type StoredTally = z.output<typeof StoredTally>;

export const tallyRecord = defineRecordCodec({
  kind: 'mode tally',
  schema: StoredTally,
  keys: (t) => ({ pk: modeKeys.tallyPartition(t.model, t.day), sk: t.signalKey }),
});

/** A checkpoint that has signals (the default of a failure-mode query). */
export const modelSeenRecord = defineRecordCodec({
  kind: 'mode model',
  schema: z.object({ model: z.string() }),
  keys: (m) => ({ pk: modeKeys.models, sk: m.model }),
});

/** One signal as an example of one of its modes. */
export const ModeExample = z.object({
  signalKey: z.string(),
  mode: z.string(),
  model: z.string(),
  receivedAt: z.string(),
  signalKind: SignalKind,
  rating: Rating,
  outcome: Outcome.optional(),
  excerpt: z.string().optional(),
  evidence: ModeLabel.shape.evidence,
  severity: z.enum(SEVERITIES).optional(),
  probability: z.number().optional(),
  source: LabelSource,
  confidence: z.number(),
  taxonomyVersion: z.number(),
});
export type ModeExample = z.output<typeof ModeExample>;

export const modeExampleRecord = defineRecordCodec({
  kind: 'mode example',
  schema: ModeExample,
  // gsi1: the same examples per mode and checkpoint, so `--model` is a key condition, not a filter.
  keys: (e) => ({ ...modeKeys.example(e.mode, e.receivedAt, e.signalKey), gsi1pk: modeKeys.exampleByModel(e.mode, e.model), gsi1sk: `${e.receivedAt}#${e.signalKey}` }),
});

/** A consented signal labelled by the judge or a person: what the local classifier retrains on. */
export const trainingExampleRecord = defineRecordCodec({
  kind: 'training example',
  schema: z.object({
    signalKey: z.string(),
    text: z.string(),
    modes: z.array(z.string()),
    labelSource: z.enum(['judge', 'human']),
    taxonomyVersion: z.number(),
    labelledAt: z.string(),
    labelledBy: z.string().optional(),
    trainingConsent: z.boolean(),
  }),
  keys: (t) => ({ ...modeKeys.training(t.signalKey), gsi1pk: modeKeys.trainingIndex, gsi1sk: `${t.labelledAt}#${t.signalKey}` }),
});

/** A signal a person should look at; `done` once resolved. */
export const StoredReviewItem = z.object({
  signalKey: z.string(),
  status: z.enum(['pending', 'done']),
  reason: ReviewReason,
  detail: z.string(),
  model: z.string(),
  receivedAt: z.string(),
  signalKind: SignalKind,
  rating: Rating,
  outcome: Outcome.optional(),
  excerpt: z.string().optional(),
  suggested: z.array(LabelledMode),
  suggestedBy: LabelSource,
  createdAt: z.string(),
  resolvedAt: z.string().optional(),
  resolvedBy: z.string().optional(),
  resolution: z.array(z.string()).optional(),
});
export type StoredReviewItem = z.output<typeof StoredReviewItem>;

export const reviewItemRecord = defineRecordCodec({
  kind: 'review item',
  schema: StoredReviewItem,
  // Pending items queue oldest first by creation, done ones newest first by resolution.
  keys: (r) => ({ ...modeKeys.review(r.signalKey), gsi1pk: modeKeys.reviewQueue(r.status), gsi1sk: `${r.resolvedAt ?? r.createdAt}#${r.signalKey}` }),
});

/** A comment's embedding, with the label it had when embedded, for clustering. */
export const embeddingRecord = defineRecordCodec({
  kind: 'comment embedding',
  schema: z.object({
    signalKey: z.string(),
    model: z.string(),
    receivedAt: z.string(),
    embeddingModel: z.string(),
    /** Float32 little-endian, base64. */
    vector: z.string(),
    text: z.string(),
    modes: z.array(z.string()),
    labelSource: LabelSource,
    confidence: z.number(),
  }),
  keys: (e) => ({ ...modeKeys.embedding(e.signalKey), gsi1pk: modeKeys.embeddingDay(utcDay(e.receivedAt)), gsi1sk: `${e.receivedAt}#${e.signalKey}` }),
});

const ClusterExample = z.object({ signalKey: z.string(), model: z.string(), receivedAt: z.string(), text: z.string(), modes: z.array(z.string()) });

/** A cluster of the last clustering, kept so eval drafts and people can refer to it by id. */
export const clusterRecord = defineRecordCodec({
  kind: 'comment cluster',
  schema: z.object({
    id: z.string(),
    count: z.number(),
    firstSeen: z.string(),
    lastSeen: z.string(),
    trend: z.object({ last7Days: z.number(), previous7Days: z.number(), direction: z.enum(['up', 'down', 'flat']) }),
    byDay: z.record(z.string(), z.number()),
    modes: z.record(z.string(), z.number()),
    explainedShare: z.number(),
    candidateMode: z.boolean(),
    models: z.array(z.string()),
    examples: z.array(ClusterExample),
    /** The first 500 members. */
    signalKeys: z.array(z.string()),
    computedAt: z.string(),
    /** The embedding model of every member's vector (one model per clustering; absent on leader-clustering records). */
    embeddingModel: z.string().optional(),
    /** The first 500 members; `text` only for those with training consent. */
    members: z.array(z.object({ signalKey: z.string(), receivedAt: z.string(), text: z.string().optional() })).optional(),
    /** c-TF-IDF of the cluster's consented texts against the rest, best first. */
    topTerms: z.array(z.object({ term: z.string(), weight: z.number() })).optional(),
    /** A name and mode id made from the top terms (or by the judge model when one is configured). */
    suggestedName: z.object({ name: z.string(), id: z.string(), by: z.enum(['terms', 'model']) }).optional(),
    /** Set once a person promoted the cluster into a taxonomy version (a copy of its promotion record). */
    promoted: z.object({ mode: z.string(), taxonomyVersion: z.number(), promotedBy: z.string(), promotedAt: z.string() }).optional(),
    /** A hash of every member's signal key (`clusterMembersHash`): a promotion names it to say which members it saw. */
    membersHash: z.string().optional(),
    /** Changes on every write: writers put only over the revision they read (conditional `unchanged`). */
    revision: z.string().optional(),
  }),
  keys: (c) => ({ ...modeKeys.cluster(c.id), gsi1pk: modeKeys.clusters, gsi1sk: `${pad10(c.count)}#${c.id}` }),
});

/**
 * The promotion of a cluster, in its own record so that clustering never rewrites it. Claimed (`absent`) before the
 * taxonomy is saved, so one promotion of a cluster wins; `taxonomyVersion`/`promotedAt` are set once it finished.
 */
export const clusterPromotionRecord = defineRecordCodec({
  kind: 'cluster promotion',
  schema: z.object({
    clusterId: z.string(),
    mode: z.string(),
    membersHash: z.string(),
    promotedBy: z.string(),
    claimedAt: z.string(),
    taxonomyVersion: z.number().optional(),
    promotedAt: z.string().optional(),
  }),
  keys: (p) => modeKeys.clusterPromotion(p.clusterId),
});

/** The git repository a draft's source signals name (client-written: checked against the sources on approval). */
export const DraftRepo = z.object({ kind: z.literal('git'), url: z.string(), commit: z.string() });

/** Where a case came from: the signals, clusters and modes behind it. */
export const CaseLineage = z.object({
  eventIds: z.array(z.string()),
  reportIds: z.array(z.string()),
  clusterIds: z.array(z.string()),
  modes: z.array(z.string()),
});

/** An eval case a model drafted; a person approves it into a private suite. */
export const StoredEvalDraft = z.object({
  id: z.string(),
  status: z.enum(['pending', 'approved']),
  createdAt: z.string(),
  drafter: z.string(),
  instruction: z.string(),
  context: z.string(),
  rubric: z.array(z.object({ criterion: z.string(), weight: z.number() })),
  checks: z.array(z.string()),
  lineage: CaseLineage,
  repo: DraftRepo.optional(),
  /** User turns, a simulated user, changing tools, fake services, when the complaint needs them (copied onto the task). */
  behaviour: TaskBehaviourSchema.optional(),
  approvedBy: z.string().optional(),
  approvedAt: z.string().optional(),
  taskId: z.string().optional(),
  suite: z.string().optional(),
  suiteVersion: z.number().optional(),
});
export type StoredEvalDraft = z.output<typeof StoredEvalDraft>;

export const evalDraftRecord = defineRecordCodec({
  kind: 'eval draft',
  schema: StoredEvalDraft,
  // Pending drafts list by creation, approved ones by approval.
  keys: (d) => ({ ...modeKeys.draft(d.id), gsi1pk: modeKeys.drafts(d.status), gsi1sk: `${d.approvedAt ?? d.createdAt}#${d.id}` }),
});

/** What the approve route checks of a draft before the use case reads it whole. */
export const draftApprovalView = defineRecordView({
  kind: 'eval draft',
  schema: StoredEvalDraft.pick({ status: true, repo: true }),
});

/** An approved case, listed on each of its modes' pages. */
export const modeCaseRecord = defineRecordCodec({
  kind: 'mode case',
  schema: z.object({
    mode: z.string(),
    taskId: z.string(),
    suite: z.string(),
    draftId: z.string(),
    approvedBy: z.string(),
    approvedAt: z.string(),
    lineage: CaseLineage,
  }),
  keys: (c) => modeKeys.modeCase(c.mode, c.approvedAt, c.taskId),
  fromKeys: (k) => ({ mode: modeKeys.modeOfCasesPartition(k.pk) }),
});

/** One immutable taxonomy version. */
export const taxonomyRecord = defineRecordCodec({
  kind: 'taxonomy version',
  schema: z.object({ version: z.number(), taxonomy: Taxonomy, createdAt: z.string() }),
  keys: (t) => ({ pk: TAXONOMY_PK, sk: taxonomySortKey(t.version) }),
});

/** How labels of taxonomy version n read in version n+1: every mode id of n and the mode id it maps to. */
export const taxonomyMappingRecord = defineRecordCodec({
  kind: 'taxonomy mapping',
  schema: z.object({
    fromVersion: z.number(),
    toVersion: z.number(),
    /** Every mode id of `fromVersion` (live or retired) → its id in `toVersion`. */
    modes: z.record(z.string(), z.string()),
    /** Modes `toVersion` adds, and the cluster each came from. */
    added: z.array(z.object({ mode: z.string(), fromCluster: z.string().optional() })),
    /** Signals given an added mode as a suggested, unreviewed label. */
    suggestedLabels: z.number(),
    createdBy: z.string(),
    createdAt: z.string(),
  }),
  keys: (m) => modeKeys.taxonomyMapping(m.fromVersion, m.toVersion),
});

/**
 * A mode suggested for a signal and not reviewed by anyone (a member of a promoted cluster). It is not a label: it
 * changes no count, no tally and no training set until a person labels the signal.
 */
export const suggestedLabelRecord = defineRecordCodec({
  kind: 'suggested mode label',
  schema: z.object({
    signalKey: z.string(),
    mode: z.string(),
    taxonomyVersion: z.number(),
    source: z.literal('cluster'),
    clusterId: z.string(),
    embeddingModel: z.string().optional(),
    reviewed: z.literal(false),
    suggestedBy: z.string(),
    suggestedAt: z.string(),
  }),
  keys: (l) => ({ ...modeKeys.suggestedLabel(l.signalKey, l.mode), gsi1pk: modeKeys.suggestedForMode(l.mode), gsi1sk: `${l.suggestedAt}#${l.signalKey}` }),
});

/** The sequence number of the last local event the local pipeline queued. */
export const localEventCursorRecord = defineRecordCodec({
  kind: 'local modes event cursor',
  schema: z.object({ seq: z.number() }),
  keys: () => modeKeys.localEventCursor,
});


/** A checkpoint's failure-mode counts of one day (`mode-day-rollup.ts`). */
export const ModeDayCounts = z.object({
  model: z.string(),
  day: z.string(),
  /** Signals (one per feedbackKey: its newest vote). */
  signals: z.number().int(),
  /** Signals with a label (a mode or none). */
  classified: z.number().int(),
  modes: z.record(z.string(), z.number().int()),
  computedAt: z.string(),
});
export type ModeDayCounts = z.output<typeof ModeDayCounts>;

export const modeDayRollupRecord = defineRecordCodec({
  kind: 'mode day rollup',
  schema: ModeDayCounts,
  keys: (r) => modeKeys.dayRollup(r.model, r.day),
});
