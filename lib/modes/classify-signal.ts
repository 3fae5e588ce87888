/**
 * The classifier chain for one stored signal: the local classifier labels first; when it is unsure the LLM judge
 * labels it (structured output, checked) — the registry's promoted `failure-mode` version when there is one, else the
 * environment's judge model; what neither settles goes to the human review queue with the best guess
 * so far. Nothing is dropped: a bare rating or outcome is counted with no mode, a judge that keeps answering badly
 * leaves the signal in review, and a judge endpoint that is down fails the delivery so the queue retries it (and
 * dead-letters it after the stage's receive count).
 */
import { JUDGE_VERDICT, type JudgeVerdictDetail } from '../judges/events.ts';
import { judgeRefString, type JudgeRef } from '../judges/judge-identity.ts';
import { readHead, readVersion } from '../judges/registry/judge-store.ts';
import { registerJudge } from '../judges/registry/register-judge.ts';
import { createModel } from '../models/create-model.ts';
import { ModelRequestError } from '../models/model-errors.ts';
import type { DomainEvent } from '../ports/events.ts';
import type { ModelsPort } from '../ports/models.ts';
import type { Ports } from '../ports/ports.ts';
import type { RecordsPort } from '../ports/records.ts';
import type { ClassifierSource } from './current-classifier.ts';
import { FAILURE_MODE_JUDGE, failureModeJudgeDefinition, judgeSignal, type JudgeFailure } from './judge-signal.ts';
import { isNegative, readSignalTrajectory, type Signal } from './signal.ts';
import { ensureTaxonomy, loadTaxonomy } from './taxonomy/taxonomy-store.ts';
import type { Taxonomy } from './taxonomy/taxonomy.ts';
import type { ModeLabel, ReviewReason } from './mode-label.ts';
import { readLabel, writeLabel } from './write-label.ts';

/** Published once per signal the chain labels (before the label is stored); the detail is `FailureModesLabelledDetail`. */
export const FAILURE_MODES_LABELLED = 'failure-modes.labelled';

/** What the chain found in one signal: its modes (ids), who found them, and whether a person still has to look. */
export type FailureModesLabelledDetail = {
  signalKey: string;
  kind: 'feedback' | 'report';
  /** The feedback event's or report's id. */
  id: string;
  model: string;
  modes: string[];
  source: 'local' | 'judge' | 'human' | 'none';
  /** Queued for a person (unsure or failed judge): the modes are a best guess. */
  inReview: boolean;
  labelledAt: string;
};

/** Judge answers below this confidence are kept but reviewed by a person. */
export const JUDGE_MIN_CONFIDENCE = 0.6;

export interface ChainDeps {
  /** With `events`, a `judge.verdict` is published after each verdict of the judge (the drift watch samples them). */
  ports: Pick<Ports, 'records' | 'blobs' | 'now' | 'metrics'> & Partial<Pick<Ports, 'events'>>;
  classifier: ClassifierSource;
  /**
   * The environment's LLM judge (`FLYWHEEL_JUDGE_MODEL`). The chain judges with the registry's promoted `failure-mode`
   * version when there is one (its model, its taxonomy version), else with this model; with neither, unsure local
   * labels go to review as they are.
   */
  judge?: ModelsPort;
  /** How long the promoted `failure-mode` version is cached before the registry is read again (default 10 s; 0: every signal). */
  judgeRegistryTtlMs?: number;
  judgeMinConfidence?: number;
  judgeMaxAttempts?: number;
}

export type ChainOutcome = 'local' | 'judge' | 'review' | 'none' | 'already-labelled';

const FAILURE_REASON: Record<JudgeFailure, ReviewReason> = {
  malformed: 'judge-malformed',
  'unknown-mode': 'judge-unknown-mode',
  'evidence-not-found': 'judge-evidence-not-found',
  'no-answer': 'judge-no-answer',
};

/** Registrations of the chain's judge made by this process, per records store (a tenant's view is one). */
const registered = new WeakMap<RecordsPort, Map<string, Promise<JudgeRef>>>();

/**
 * The registry's reference of the judge the chain runs (model, prompt, tool schema, taxonomy version): registered
 * idempotently on first use and cached per process, so every label the judge gives names the exact judge version.
 *
 * @example
 * const ref = await chainJudgeRef(ports, judge.id, taxonomy); // { name: 'failure-mode', version: '3f2a9c0d1e2b' }
 */
export async function chainJudgeRef(ports: Pick<Ports, 'records' | 'now'>, modelId: string, taxonomy: Taxonomy): Promise<JudgeRef> {
  let byKey = registered.get(ports.records);
  if (!byKey) registered.set(ports.records, (byKey = new Map()));
  const key = `${modelId}\u0000${taxonomy.version}`;
  let ref = byKey.get(key);
  if (!ref) {
    ref = registerJudge(ports, { ...failureModeJudgeDefinition(modelId, taxonomy), by: 'failure-mode-chain' }).then((r) => r.ref);
    byKey.set(key, ref);
    ref.catch(() => byKey.delete(key)); // a failed registration is tried again by the next signal
  }
  return ref;
}

/** The judge one signal is judged with: its model, the registry version it is, and the taxonomy it labels with. */
export interface ChainJudge {
  model: ModelsPort;
  ref: JudgeRef;
  /** The taxonomy the judge's prompt and tool name (the promoted version's, which may be older than the newest). */
  taxonomy: Taxonomy;
  /** `promoted`: the registry's promoted `failure-mode` version; `environment`: the configured judge model. */
  source: 'promoted' | 'environment';
}

/** Default seconds-scale cache of the promoted version: a demotion stops being used within this long. */
export const JUDGE_REGISTRY_TTL_MS = 10_000;

interface PromotedJudge {
  ref: JudgeRef;
  modelSpec: string;
  taxonomyVersion?: number;
}
/** The promoted `failure-mode` version as last read, per records store, with when it was read. */
const promotedCache = new WeakMap<RecordsPort, { readAt: number; value: Promise<PromotedJudge | undefined> }>();
/** Models built from promoted versions' specs, per spec (a version's model never changes). */
const modelsBySpec = new Map<string, ModelsPort>();

async function readPromoted(records: RecordsPort): Promise<PromotedJudge | undefined> {
  const head = await readHead(records, FAILURE_MODE_JUDGE);
  if (!head?.promoted) return undefined;
  const ref = { name: FAILURE_MODE_JUDGE, version: head.promoted };
  const version = await readVersion(records, ref);
  if (!version || version.status === 'retired') return undefined;
  return { ref, modelSpec: version.definition.model, ...(version.definition.taxonomyVersion !== undefined ? { taxonomyVersion: version.definition.taxonomyVersion } : {}) };
}

/**
 * The judge the chain runs now: the registry's promoted `failure-mode` version when there is one whose model this
 * process can run (read again after `judgeRegistryTtlMs`, so a demotion stops being used within that), else the
 * environment's judge model, registered as a candidate version of `failure-mode`. Undefined when there is neither.
 *
 * @example
 * const judge = await resolveChainJudge({ ports, classifier, judge: envJudge }, taxonomy);
 * judge?.ref; // { name: 'failure-mode', version: '3f2a9c0d1e2b' }; judge?.source: 'promoted' | 'environment'
 */
export async function resolveChainJudge(deps: Pick<ChainDeps, 'ports' | 'judge' | 'judgeRegistryTtlMs'>, taxonomy: Taxonomy): Promise<ChainJudge | undefined> {
  const { ports } = deps;
  const ttl = deps.judgeRegistryTtlMs ?? JUDGE_REGISTRY_TTL_MS;
  const now = ports.now().getTime();
  let cached = promotedCache.get(ports.records);
  if (!cached || ttl <= 0 || now - cached.readAt >= ttl || now < cached.readAt) {
    cached = { readAt: now, value: readPromoted(ports.records) };
    promotedCache.set(ports.records, cached);
    const mine = cached;
    mine.value.catch(() => {
      if (promotedCache.get(ports.records) === mine) promotedCache.delete(ports.records); // read again on the next signal
    });
  }
  const promoted = await cached.value;
  if (promoted) {
    const model = promotedModel(promoted.modelSpec, deps.judge);
    if (model) {
      const judgeTaxonomy = promoted.taxonomyVersion === undefined || promoted.taxonomyVersion === taxonomy.version ? taxonomy : await loadTaxonomy(ports.records, promoted.taxonomyVersion);
      return { model, ref: promoted.ref, taxonomy: judgeTaxonomy, source: 'promoted' };
    }
  }
  if (!deps.judge) return undefined;
  return { model: deps.judge, ref: await chainJudgeRef(ports, deps.judge.id, taxonomy), taxonomy, source: 'environment' };
}

/** The promoted version's model: the environment's judge when it is that model, else one built from its spec (undefined when this process cannot run it). */
function promotedModel(spec: string, envJudge: ModelsPort | undefined): ModelsPort | undefined {
  if (envJudge && envJudge.id === spec) return envJudge;
  let model = modelsBySpec.get(spec);
  if (!model) {
    try {
      model = createModel(spec, { env: process.env });
    } catch {
      return undefined; // not a model spec this process can run (e.g. a reward model): the environment's judge runs
    }
    modelsBySpec.set(spec, model);
  }
  return model;
}

/**
 * @example
 * const outcome = await classifySignal({ ports, classifier: storedClassifier(ports), judge }, signal);
 * // 'local' | 'judge' | 'review' | 'none' | 'already-labelled'
 */
export async function classifySignal(deps: ChainDeps, signal: Signal, taxonomyIn?: Taxonomy): Promise<{ outcome: ChainOutcome; label: ModeLabel }> {
  const { ports } = deps;
  const existing = await readLabel(ports, signal.key);
  if (existing) {
    // A redelivery: the label stands (a human one above all); rewriting the same rows keeps counts exact.
    await writeLabel(ports, signal, existing, existing);
    return { outcome: 'already-labelled', label: existing };
  }
  const taxonomy = taxonomyIn ?? (await ensureTaxonomy(ports.records));
  const labelledAt = ports.now().toISOString();
  const base = { signalKey: signal.key, model: signal.model, taxonomyVersion: taxonomy.version, labelledAt };

  let label: ModeLabel;
  let outcome: ChainOutcome;
  let verdict: JudgeVerdictDetail | undefined;
  const trajectoryOf = async (): Promise<string | undefined> => (signal.trajectoryKey && isNegative(signal) ? readSignalTrajectory(deps.ports.blobs, signal.trajectoryKey) : undefined);

  // The judge is looked up only for a signal it would judge: the promoted version, else the environment's model.
  if (signal.text === undefined) {
    const judge = signal.trajectoryKey && isNegative(signal) ? await resolveChainJudge(deps, taxonomy) : undefined;
    const trajectory = judge ? await trajectoryOf() : undefined;
    if (judge && trajectory !== undefined) {
      ({ label, outcome, verdict } = await judged(deps, judge, signal, trajectory, base, undefined));
    } else {
      label = { ...base, modes: [], source: 'none', confidence: 0, unclassifiable: signal.nonText ? 'non-text' : 'no-text' };
      outcome = 'none';
    }
  } else {
    const classifier = await deps.classifier.get();
    const c = classifier.classify(signal.text);
    const local: ModeLabel = {
      ...base,
      taxonomyVersion: classifier.taxonomyVersion,
      modes: c.labels.map((l) => ({ mode: l.mode, probability: l.probability })),
      source: 'local',
      confidence: c.confidence,
      classifierVersion: classifier.modelVersion,
      ...(c.unclassifiable ? { unclassifiable: c.unclassifiable } : {}),
    };
    const unsure = c.escalate || c.unclassifiable === 'no-features';
    const judge = unsure ? await resolveChainJudge(deps, taxonomy) : undefined;
    if (!unsure) {
      label = c.unclassifiable ? { ...local, source: 'none' } : local;
      outcome = c.unclassifiable ? 'none' : 'local';
    } else if (!judge) {
      if (c.unclassifiable) {
        label = { ...local, source: 'none' };
        outcome = 'none';
      } else {
        label = {
          ...local,
          review: { reason: 'local-unsure', detail: `local confidence ${c.confidence.toFixed(2)} < ${classifier.escalationThreshold.toFixed(2)} and no judge is promoted or configured (FLYWHEEL_JUDGE_MODEL)` },
        };
        outcome = 'review';
      }
    } else {
      ({ label, outcome, verdict } = await judged(deps, judge, signal, await trajectoryOf(), base, local));
    }
  }
  // Published before the label is written: a crash between the two redoes both (the same event ids), never loses one.
  // `failure-modes.labelled` tells the experiments' failure-mode rates (lib/experiments/consumers/) what was found.
  if (ports.events) {
    const labelled: FailureModesLabelledDetail = {
      signalKey: signal.key,
      kind: signal.kind,
      id: signal.id,
      model: signal.model,
      modes: label.modes.map((m) => m.mode),
      source: label.source,
      inReview: label.review !== undefined,
      labelledAt: label.labelledAt,
    };
    const events: DomainEvent[] = [
      ...(verdict ? [{ type: JUDGE_VERDICT, id: `${JUDGE_VERDICT}:${signal.key}:${judgeRefString(verdict.judge)}`, detail: verdict }] : []),
      { type: FAILURE_MODES_LABELLED, id: `${FAILURE_MODES_LABELLED}:${signal.key}`, detail: labelled },
    ];
    await ports.events.publish(events);
  }
  await writeLabel(ports, signal, label);
  ports.metrics?.count(`ModesLabel_${outcome}`);
  return { outcome, label };
}

async function judged(
  deps: ChainDeps,
  chainJudge: ChainJudge,
  signal: Signal,
  trajectory: string | undefined,
  baseIn: Pick<ModeLabel, 'signalKey' | 'model' | 'taxonomyVersion' | 'labelledAt'>,
  local: ModeLabel | undefined,
): Promise<{ label: ModeLabel; outcome: ChainOutcome; verdict?: JudgeVerdictDetail }> {
  const { model: judge, ref: judgeRef, taxonomy } = chainJudge;
  // A judge label names the modes of the taxonomy the judge labelled with (a promoted version may predate the newest).
  const base = { ...baseIn, taxonomyVersion: taxonomy.version };
  const fallback: ModeLabel = local ?? { ...base, modes: [], source: 'none', confidence: 0 };
  let result;
  try {
    result = await judgeSignal(
      judge,
      taxonomy,
      {
        ...(signal.text !== undefined ? { comment: signal.text } : {}),
        ...(trajectory !== undefined ? { trajectory } : {}),
        rating: signal.rating,
        ...(signal.outcome ? { outcome: signal.outcome } : {}),
        signalKind: signal.signalKind,
      },
      deps.judgeMaxAttempts,
    );
  } catch (error) {
    // A request the endpoint refuses for good will not get better on redelivery: a person looks instead.
    if (error instanceof ModelRequestError) {
      return { label: { ...fallback, judgeModel: judge.id, judge: judgeRef, review: { reason: 'judge-error', detail: error.message.slice(0, 500) } }, outcome: 'review' };
    }
    throw error;
  }
  if (!result.ok) {
    return {
      label: { ...fallback, judgeModel: result.model, judge: judgeRef, judgeAttempts: result.attempts, review: { reason: FAILURE_REASON[result.reason], detail: result.message.slice(0, 500) } },
      outcome: 'review',
    };
  }
  const v = result.verdict;
  const label: ModeLabel = {
    ...base,
    modes: v.modes.map((m) => ({ mode: m.mode, severity: m.severity })),
    source: 'judge',
    confidence: v.confidence,
    judgeModel: result.model,
    judge: judgeRef,
    judgeAttempts: result.attempts,
    ...(local?.classifierVersion ? { classifierVersion: local.classifierVersion } : {}),
    ...(v.modes.length > 0 ? { evidence: { text: v.evidence, source: v.evidenceSource } } : {}),
  };
  const named = new Set(v.modes.map((m) => m.mode));
  const verdict: JudgeVerdictDetail = {
    judge: judgeRef,
    subject: { kind: 'signal', signalKey: signal.key },
    // Every mode of the taxonomy, in the gold-item vocabulary: yes for the modes named, no for the others.
    labels: Object.fromEntries(taxonomy.modes.map((m) => [`mode:${m.id}`, named.has(m.id) ? 'yes' : 'no'])),
    fine: v.modes.length === 0,
    ...(signal.rating !== 'none' ? { userRating: signal.rating } : {}),
    at: base.labelledAt,
  };
  const min = deps.judgeMinConfidence ?? JUDGE_MIN_CONFIDENCE;
  if (v.confidence < min) {
    return { label: { ...label, review: { reason: 'judge-low-confidence', detail: `judge confidence ${v.confidence.toFixed(2)} < ${min}` } }, outcome: 'review', verdict };
  }
  return { label, outcome: 'judge', verdict };
}

