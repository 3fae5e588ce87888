/**
 * Writes a signal's label and everything derived from it: the tally row (the counter), one example row per mode,
 * the training example (consented signals, judge or human labels only: a model never trains on its own guesses),
 * the review item, and the label history. The current label is written last: its presence is what a redelivered
 * event checks, so a crash half-way leaves the signal to be finished by the next delivery.
 */
import type { Ports } from '../ports/ports.ts';
import type { RecordItem } from '../ports/records.ts';
import type { ModeLabel } from './mode-label.ts';
import {
  labelHistoryRecord,
  modeExampleRecord,
  modeLabelRecord,
  modelSeenRecord,
  reviewItemRecord,
  tallyRecord,
  trainingExampleRecord,
  type StoredTally,
} from './record-codecs.ts';
import { modeKeys } from './record-keys.ts';
import type { Signal } from './signal.ts';

const EXCERPT_CHARS = 600;

function excerpt(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
}

/** The tally row of a signal: what the failure-mode counts read. */
export function tallyOf(signal: Signal, label: Pick<ModeLabel, 'modes' | 'source' | 'confidence'>): StoredTally {
  return {
    signalKey: signal.key,
    model: signal.model,
    day: signal.day,
    receivedAt: signal.receivedAt,
    signalKind: signal.signalKind,
    rating: signal.rating,
    ...(signal.outcome ? { outcome: signal.outcome } : {}),
    ...(signal.turn ? { turn: signal.turn } : {}),
    ...(signal.feedbackKey ? { feedbackKey: signal.feedbackKey } : {}),
    modes: label.modes.map((m) => m.mode),
    source: label.source,
    confidence: label.confidence,
  };
}

/**
 * @param previous the label being replaced (its example rows of modes no longer named are deleted)
 */
export async function writeLabel(ports: Pick<Ports, 'records'>, signal: Signal, label: ModeLabel, previous?: ModeLabel): Promise<void> {
  const records = ports.records;
  const items: RecordItem[] = [];
  const keep = new Set(label.modes.map((m) => m.mode));
  for (const old of previous?.modes ?? []) {
    if (!keep.has(old.mode)) {
      const k = modeKeys.example(old.mode, signal.receivedAt, signal.key);
      await records.delete(k.pk, k.sk);
    }
  }
  const summary = signalSummary(signal);
  for (const m of label.modes) {
    items.push(
      modeExampleRecord.encode({
        signalKey: signal.key,
        mode: m.mode,
        ...summary,
        ...(label.evidence ? { evidence: label.evidence } : {}),
        ...(m.severity ? { severity: m.severity } : {}),
        ...(m.probability !== undefined ? { probability: m.probability } : {}),
        source: label.source,
        confidence: label.confidence,
        taxonomyVersion: label.taxonomyVersion,
      }),
    );
  }
  if (signal.trainingConsent && signal.text !== undefined && (label.source === 'judge' || label.source === 'human') && !label.review) {
    items.push(
      trainingExampleRecord.encode({
        signalKey: signal.key,
        text: signal.text,
        modes: label.modes.map((m) => m.mode),
        labelSource: label.source,
        taxonomyVersion: label.taxonomyVersion,
        labelledAt: label.labelledAt,
        ...(label.labelledBy ? { labelledBy: label.labelledBy } : {}),
        trainingConsent: true,
      }),
    );
  } else if (label.source === 'human' || label.review) {
    // A newer label without consent or still under review must not leave an older training example behind.
    const t = modeKeys.training(signal.key);
    if (previous && (previous.source === 'judge' || previous.source === 'human')) await records.delete(t.pk, t.sk);
  }
  if (label.review) {
    items.push(
      reviewItemRecord.encode({
        signalKey: signal.key,
        status: 'pending',
        reason: label.review.reason,
        detail: label.review.detail,
        ...summary,
        suggested: label.modes,
        suggestedBy: label.source,
        createdAt: label.labelledAt,
      }),
    );
  } else if (previous?.review) {
    const review = modeKeys.review(signal.key);
    const item = reviewItemRecord.decodeIfPresent(await records.get(review.pk, review.sk));
    if (item && item.status === 'pending') {
      items.push(
        reviewItemRecord.encode({
          ...item,
          status: 'done',
          resolvedAt: label.labelledAt,
          ...(label.labelledBy ? { resolvedBy: label.labelledBy } : {}),
          resolution: label.modes.map((m) => m.mode),
        }),
      );
    }
  }
  items.push(tallyRecord.encode(tallyOf(signal, label)));
  items.push(modelSeenRecord.encode({ model: signal.model }));
  items.push(labelHistoryRecord.encode(label));
  await records.putMany(items);
  await records.put(modeLabelRecord.encode(label));
}

/** The current label of a signal, if any. */
export async function readLabel(ports: Pick<Ports, 'records'>, signalKey: string): Promise<ModeLabel | undefined> {
  const k = modeKeys.label(signalKey);
  return modeLabelRecord.decodeIfPresent(await ports.records.get(k.pk, k.sk));
}

/** What an example and a review item show of their signal: where it came from and a short excerpt. */
function signalSummary(signal: Signal) {
  const text = excerpt(signal.text);
  return {
    model: signal.model,
    receivedAt: signal.receivedAt,
    signalKind: signal.signalKind,
    rating: signal.rating,
    ...(signal.outcome ? { outcome: signal.outcome } : {}),
    ...(text !== undefined ? { excerpt: text } : {}),
  };
}
