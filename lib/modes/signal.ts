/**
 * A stored signal as the failure-mode chain reads it: a feedback event (rating, comment, implicit outcome) or a
 * report, with the fields that matter for labelling and counting. Loaded by key from the records the ingestion
 * pipeline wrote (`feedback.stored` / `report.stored` carry ids, not bodies).
 */
import { feedbackKeys, utcDay } from '../feedback/record-keys.ts';
import type { Ports } from '../ports/ports.ts';
import type { RecordItem } from '../ports/records.ts';
import { feedbackSignalView, reportSignalView } from './record-codecs.ts';
import { signalKeyOf } from './record-keys.ts';

export interface Signal {
  key: string;
  kind: 'feedback' | 'report';
  id: string;
  model: string;
  /** `rating` | `comment` | `outcome` for feedback; `report` for reports. */
  signalKind: 'rating' | 'comment' | 'outcome' | 'report';
  rating: 'up' | 'down' | 'none';
  outcome?: 'accepted' | 'reverted' | 'retried' | 'corrected';
  /** The free text (comment, or report title + body); undefined when there is none or it is not a string. */
  text?: string;
  /** Set when the stored comment was present but not text (a client that bypassed the schema). */
  nonText?: boolean;
  trainingConsent: boolean;
  receivedAt: string;
  day: string;
  /** `traceId:turnId` (the turn the signal is about), when known. */
  turn?: string;
  /** Groups votes that replace each other (feedback only). */
  feedbackKey?: string;
  trajectoryKey?: string;
  severity?: string;
  context?: Record<string, unknown>;
}

/** Whether the signal says something went wrong (a thumbs-down, a revert/retry/correction, a report, a comment). */
export function isNegative(s: Signal): boolean {
  return s.rating === 'down' || s.outcome === 'reverted' || s.outcome === 'retried' || s.outcome === 'corrected' || s.kind === 'report';
}

function textOf(...parts: unknown[]): { text?: string; nonText: boolean } {
  let nonText = false;
  const strings: string[] = [];
  for (const p of parts) {
    if (p === undefined || p === null) continue;
    if (typeof p !== 'string') {
      nonText = true;
      continue;
    }
    if (p.trim() !== '') strings.push(p);
  }
  return strings.length > 0 ? { text: strings.join('\n\n'), nonText } : { nonText };
}

/** A signal from a stored report. */
function signalOfReport(item: RecordItem): Signal {
  const report = reportSignalView.decode(item);
  const { text, nonText } = textOf(report.title, report.body);
  return {
    key: signalKeyOf('report', report.reportId),
    kind: 'report',
    id: report.reportId,
    model: report.model,
    signalKind: 'report',
    rating: 'none',
    ...(text !== undefined ? { text } : {}),
    ...(nonText ? { nonText } : {}),
    trainingConsent: report.trainingConsent === true,
    receivedAt: report.receivedAt,
    day: utcDay(report.receivedAt),
    ...(report.traceId !== undefined ? { turn: `${report.traceId}:report` } : {}),
    severity: report.severity,
    // The repository and commit a report names, where an eval case drafted from it starts.
    ...(report.repo !== undefined && report.commit !== undefined ? { context: { repo: report.repo, commit: report.commit } } : {}),
  };
}

/** A signal from a stored feedback event. */
function signalOfFeedback(item: RecordItem): Signal {
  const event = feedbackSignalView.decode(item);
  const { text, nonText } = textOf(event.comment);
  return {
    key: signalKeyOf('feedback', event.eventId),
    kind: 'feedback',
    id: event.eventId,
    model: event.model,
    signalKind: event.kind,
    rating: event.rating,
    ...(event.outcome ? { outcome: event.outcome } : {}),
    ...(text !== undefined ? { text } : {}),
    ...(nonText ? { nonText } : {}),
    trainingConsent: event.trainingConsent,
    receivedAt: event.receivedAt,
    day: utcDay(event.receivedAt),
    turn: `${event.traceId}:${event.turnId}`,
    feedbackKey: event.feedbackKey,
    ...(event.trajectory ? { trajectoryKey: event.trajectory.blobKey } : {}),
    ...(event.context ? { context: event.context } : {}),
  };
}

/** A signal from its stored record; throws `MalformedRecordError` naming the field when the record is not one. */
export function signalFromRecord(kind: 'feedback' | 'report', item: RecordItem): Signal {
  return kind === 'report' ? signalOfReport(item) : signalOfFeedback(item);
}

/** Loads a stored signal; undefined when the record is not there. */
export async function loadSignal(ports: Pick<Ports, 'records'>, kind: 'feedback' | 'report', id: string): Promise<Signal | undefined> {
  const key = kind === 'feedback' ? feedbackKeys.event(id) : feedbackKeys.report(id);
  const item = await ports.records.get(key.pk, key.sk);
  return item ? signalFromRecord(kind, item) : undefined;
}

/** Loads a signal from its key (`feedback:<id>` / `report:<id>`). */
export async function loadSignalByKey(ports: Pick<Ports, 'records'>, signalKey: string): Promise<Signal | undefined> {
  const colon = signalKey.indexOf(':');
  const kind = signalKey.slice(0, colon);
  if (colon < 0 || (kind !== 'feedback' && kind !== 'report')) return undefined;
  return loadSignal(ports, kind, signalKey.slice(colon + 1));
}

/** Every string in a JSON value (a trajectory), joined by newlines and cut at `maxChars`: what the judge may quote. */
export function flattenText(value: unknown, maxChars: number): string {
  const out: string[] = [];
  let size = 0;
  const walk = (v: unknown): void => {
    if (size >= maxChars) return;
    if (typeof v === 'string') {
      if (v.trim() === '') return;
      out.push(v);
      size += v.length + 1;
    } else if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  walk(value);
  return out.join('\n').slice(0, maxChars);
}

/** Bytes of a trajectory blob read for the failure-mode judge (a larger one is not read). */
export const JUDGE_TRAJECTORY_MAX_BYTES = 2 * 1024 * 1024;
/** Characters of a signal's trajectory text the failure-mode judge reads. */
export const JUDGE_TRAJECTORY_TEXT_CHARS = 12_000;

/**
 * The text of a signal's trajectory as the failure-mode judge reads it (the chain and its calibration alike): the
 * JSON's strings flattened, else the raw text, cut to `JUDGE_TRAJECTORY_TEXT_CHARS`; undefined when the blob is gone
 * or too large.
 *
 * @example
 * const trajectory = signal.trajectoryKey ? await readSignalTrajectory(ports.blobs, signal.trajectoryKey) : undefined;
 */
export async function readSignalTrajectory(blobs: Ports['blobs'], key: string): Promise<string | undefined> {
  const bytes = await blobs.get(key);
  if (!bytes || bytes.byteLength > JUDGE_TRAJECTORY_MAX_BYTES) return undefined;
  const text = Buffer.from(bytes).toString('utf8');
  try {
    return flattenText(JSON.parse(text), JUDGE_TRAJECTORY_TEXT_CHARS);
  } catch {
    return text.slice(0, JUDGE_TRAJECTORY_TEXT_CHARS);
  }
}
