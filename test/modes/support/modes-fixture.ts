/** Shared setup of the failure-mode tests: local ports in a temp folder, stored signals, one trained classifier. */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalPorts, type LocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { feedbackKeys, utcDay } from '../../../lib/feedback/record-keys.ts';
import { clusterMembersHash } from '../../../lib/modes/clusters/cluster-comments.ts';
import { trainDefaultLocalClassifier } from '../../../lib/modes/classifier/default-classifier.ts';
import type { LocalClassifier } from '../../../lib/modes/classifier/local-classifier.ts';
import type { ModeClassifier } from '../../../lib/modes/current-classifier.ts';

let trained: LocalClassifier | undefined;
/** The default classifier, trained once per test file. */
export function defaultModel(): LocalClassifier {
  trained ??= trainDefaultLocalClassifier({ now: new Date('2026-12-01T00:00:00Z') });
  return trained;
}

/** The real classifier, made unsure of everything: forces the judge path whatever the text. */
export function alwaysUnsure(model: ModeClassifier): ModeClassifier {
  return {
    modelVersion: model.modelVersion,
    taxonomyVersion: model.taxonomyVersion,
    escalationThreshold: 1,
    classify: (text) => ({ ...model.classify(text), escalate: true }),
  };
}

export function tempPorts(now: () => Date = () => new Date()): { ports: LocalPorts; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'flywheel-modes-'));
  const ports = openLocalPorts(dir, { now });
  return {
    ports,
    cleanup: () => {
      ports.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let n = 0;
/** Stores a feedback event as the ingestion processor would, and returns its id. */
export async function storeFeedback(ports: LocalPorts, fields: Record<string, unknown> = {}): Promise<string> {
  n++;
  const eventId = (fields.eventId as string | undefined) ?? `ev-${process.pid}-${n}`;
  const receivedAt = (fields.receivedAt as string | undefined) ?? new Date().toISOString();
  const event = {
    eventId,
    kind: 'comment',
    rating: 'down',
    traceId: `trace-${n}`,
    sessionId: 's',
    turnId: '1',
    model: 'ckpt-a',
    source: 'user',
    reporter: 'tester',
    trainingConsent: true,
    occurredAt: receivedAt,
    receivedAt,
    feedbackKey: `trace-${n}:1:tester`,
    ...fields,
  };
  await ports.records.put({ ...event, ...feedbackKeys.event(eventId), gsi1pk: feedbackKeys.byModel(String(event.model)), gsi1sk: `${receivedAt}#${eventId}`, gsi2pk: feedbackKeys.byDay(utcDay(receivedAt)), gsi2sk: `${receivedAt}#${eventId}`, ingestId: 'test' });
  return eventId;
}

/** The body of an EventBridge event as SQS delivers it. */
export function storedEventBody(eventIds: string[], type = 'feedback.stored'): string {
  return JSON.stringify({ version: '0', id: `x-${eventIds[0]}`, 'detail-type': type, source: 'flywheel', detail: type === 'feedback.stored' ? { eventIds } : { reportIds: eventIds } });
}

/** Words hashed into 64 dimensions: comments that share words point the same way (the scripted `/v1/embeddings`). */
export function bagOfWords(text: string): number[] {
  const v = new Array<number>(64).fill(0);
  for (const w of text.toLowerCase().match(/[a-z]{3,}/g) ?? []) v[createHash('md5').update(w).digest()[0]! % 64]! += 1;
  return v;
}

/** A stored cluster of the members given (those with text are its examples), candidate for a new mode. */
export function cluster(id: string, members: { signalKey: string; text?: string }[]) {
  return {
    id,
    count: members.length,
    firstSeen: '2026-12-01T00:00:00.000Z',
    lastSeen: '2026-12-02T00:00:00.000Z',
    trend: { last7Days: members.length, previous7Days: 0, direction: 'up' as const },
    byDay: {},
    modes: { other: members.length },
    explainedShare: 0,
    candidateMode: true,
    models: ['ckpt-a'],
    examples: members.flatMap((m) => (m.text ? [{ signalKey: m.signalKey, model: 'ckpt-a', receivedAt: '2026-12-01T00:00:00.000Z', text: m.text, modes: ['other'] }] : [])),
    signalKeys: members.map((m) => m.signalKey),
    members: members.map((m) => ({ ...m, receivedAt: '2026-12-01T00:00:00.000Z' })),
    computedAt: '2026-12-02T00:00:00.000Z',
    embeddingModel: 'embed',
    membersHash: clusterMembersHash(members.map((m) => m.signalKey)),
  };
}
