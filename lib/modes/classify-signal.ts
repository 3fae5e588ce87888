/**
 * The classifier chain for one stored signal: the local classifier labels first; when it is unsure the LLM judge
 * labels it (structured output, checked); what neither settles goes to the human review queue with the best guess
 * so far. Nothing is dropped: a bare rating or outcome is counted with no mode, a judge that keeps answering badly
 * leaves the signal in review, and a judge endpoint that is down fails the delivery so the queue retries it (and
 * dead-letters it after the stage's receive count).
 */
import { JUDGE_VERDICT, type JudgeVerdictDetail } from '../judges/events.ts';
import { judgeRefString, type JudgeRef } from '../judges/judge-identity.ts';
import { registerJudge } from '../judges/registry/register-judge.ts';
import { ModelRequestError } from '../models/model-errors.ts';
import type { ModelsPort } from '../ports/models.ts';
import type { Ports } from '../ports/ports.ts';
import type { RecordsPort } from '../ports/records.ts';
import type { ClassifierSource } from './current-classifier.ts';
import { failureModeJudgeDefinition, judgeSignal, type JudgeFailure } from './judge-signal.ts';
import { flattenText, isNegative, type Signal } from './signal.ts';
import { ensureTaxonomy } from './taxonomy/taxonomy-store.ts';
import type { Taxonomy } from './taxonomy/taxonomy.ts';
import type { ModeLabel, ReviewReason } from './mode-label.ts';
import { readLabel, writeLabel } from './write-label.ts';

/** Judge answers below this confidence are kept but reviewed by a person. */
export const JUDGE_MIN_CONFIDENCE = 0.6;
/** Bytes of a trajectory blob read for the judge. */
const TRAJECTORY_MAX_BYTES = 2 * 1024 * 1024;

export interface ChainDeps {
  /** With `events`, a `judge.verdict` is published after each verdict of the judge (the drift watch samples them). */
  ports: Pick<Ports, 'records' | 'blobs' | 'now' | 'metrics'> & Partial<Pick<Ports, 'events'>>;
  classifier: ClassifierSource;
  /** The LLM judge; absent: unsure local labels go to review as they are. */
  judge?: ModelsPort;
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
  const trajectory = deps.judge && signal.trajectoryKey && isNegative(signal) ? await readTrajectory(deps, signal.trajectoryKey) : undefined;

  if (signal.text === undefined) {
    if (deps.judge && trajectory !== undefined) {
      ({ label, outcome, verdict } = await judged(deps, taxonomy, signal, trajectory, base, undefined));
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
    if (!unsure) {
      label = c.unclassifiable ? { ...local, source: 'none' } : local;
      outcome = c.unclassifiable ? 'none' : 'local';
    } else if (!deps.judge) {
      if (c.unclassifiable) {
        label = { ...local, source: 'none' };
        outcome = 'none';
      } else {
        label = {
          ...local,
          review: { reason: 'local-unsure', detail: `local confidence ${c.confidence.toFixed(2)} < ${classifier.escalationThreshold.toFixed(2)} and no judge model is configured (FLYWHEEL_JUDGE_MODEL)` },
        };
        outcome = 'review';
      }
    } else {
      ({ label, outcome, verdict } = await judged(deps, taxonomy, signal, trajectory, base, local));
    }
  }
  // Published before the label is written: a crash between the two redoes both (the same event id), never loses one.
  if (verdict && ports.events) {
    await ports.events.publish([{ type: JUDGE_VERDICT, id: `${JUDGE_VERDICT}:${signal.key}:${judgeRefString(verdict.judge)}`, detail: verdict }]);
  }
  await writeLabel(ports, signal, label);
  ports.metrics?.count(`ModesLabel_${outcome}`);
  return { outcome, label };
}

async function judged(
  deps: ChainDeps,
  taxonomy: Taxonomy,
  signal: Signal,
  trajectory: string | undefined,
  base: Pick<ModeLabel, 'signalKey' | 'model' | 'taxonomyVersion' | 'labelledAt'>,
  local: ModeLabel | undefined,
): Promise<{ label: ModeLabel; outcome: ChainOutcome; verdict?: JudgeVerdictDetail }> {
  const judge = deps.judge!;
  const judgeRef = await chainJudgeRef(deps.ports, judge.id, taxonomy);
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

async function readTrajectory(deps: ChainDeps, key: string): Promise<string | undefined> {
  const bytes = await deps.ports.blobs.get(key);
  if (!bytes || bytes.byteLength > TRAJECTORY_MAX_BYTES) return undefined;
  const text = Buffer.from(bytes).toString('utf8');
  try {
    return flattenText(JSON.parse(text), 12_000);
  } catch {
    return text.slice(0, 12_000);
  }
}
