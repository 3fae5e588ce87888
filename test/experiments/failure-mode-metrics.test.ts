/**
 * Failure modes as online metrics, over the real local drivers and the real failure-mode chain (the trained local
 * classifier): feedback posted through the dispatcher and processed, labelled by `classifySignal`, which publishes
 * `failure-modes.labelled`; `handleFailureModeVerdicts` turns that into `failure_mode.<mode>` rows with the feedback
 * event's reporter, workspace, model and arm, idempotently, in the tenant's partition; reports and labels a person
 * still has to review give none.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { scopePortsToTenant } from '../../lib/auth/tenant-ports.ts';
import { handleFailureModeVerdicts, type LabelledEvent } from '../../lib/experiments/consumers/failure-mode-metrics.ts';
import { TransientError } from '../../lib/errors.ts';
import { ingestFeedback } from '../../lib/feedback/ingest-feedback.ts';
import { trainDefaultLocalClassifier } from '../../lib/modes/classifier/default-classifier.ts';
import type { LocalClassifier } from '../../lib/modes/classifier/local-classifier.ts';
import { classifySignal, FAILURE_MODES_LABELLED } from '../../lib/modes/classify-signal.ts';
import { fixedClassifier, type ModeClassifier } from '../../lib/modes/current-classifier.ts';
import { loadSignal } from '../../lib/modes/signal.ts';
import { feedbackEvent } from '../support/feedback-event.ts';
import { openHarness, type Harness } from '../support/lambda-events.ts';

let model: LocalClassifier;
beforeAll(() => {
  model = trainDefaultLocalClassifier({ now: new Date('2026-12-01T00:00:00Z') });
}, 120_000);

let h: Harness;
beforeEach(() => {
  h = openHarness(); // the clock stands at 2026-12-02T10:00:00Z
});
afterEach(() => h.close());

/** A comment the trained classifier is sure names at least one mode (so the chain settles it locally). */
function sureComment(): string {
  const candidates = [
    'It rewrote the whole file when I asked for a one-line fix',
    'I asked for a one-line null check and it rewrote the whole validation module.',
    'Asked to fix one typo in the README, it reformatted every markdown file in the repo.',
  ];
  const text = candidates.find((t) => {
    const c = model.classify(t);
    return !c.escalate && !c.unclassifiable && c.labels.length > 0;
  });
  if (!text) throw new Error('no candidate comment is classified with confidence by the default classifier');
  return text;
}

const labelledEvents = (): LabelledEvent[] => h.ports.events.recent({ type: FAILURE_MODES_LABELLED }).map((e) => ({ type: e.type, detail: e.detail }));

async function rowsUnder(prefix: string): Promise<Array<Record<string, any> & { _key: string }>> {
  const out: Array<Record<string, any> & { _key: string }> = [];
  for (const key of (await h.ports.blobs.list(prefix)).keys) {
    for (const line of Buffer.from((await h.ports.blobs.get(key))!).toString('utf8').split('\n')) if (line !== '') out.push({ ...JSON.parse(line), _key: key });
  }
  return out;
}

describe('failure_mode.<mode> rows', () => {
  it('turns a labelled feedback signal into one row per mode, with the reporter, workspace, model and arm, once', async () => {
    const comment = sureComment();
    const posted = await h.request('POST', '/v1/feedback', {
      body: feedbackEvent({ eventId: 'fm-1', kind: 'comment', comment, rating: 'down', reporter: 'u-7', workspaceId: 'w-3', experiment: 'exp-1', arm: 'b', model: 'ckpt-b', occurredAt: '2026-12-02T09:40:00Z' }),
    });
    expect(posted.status).toBe(202);
    await h.drain();
    const deps = { ports: h.ports, classifier: fixedClassifier(model) };
    const { outcome, label } = await classifySignal(deps, (await loadSignal(h.ports, 'feedback', 'fm-1'))!);
    expect(outcome).toBe('local');
    const modes = label.modes.map((m) => m.mode);
    expect(modes.length).toBeGreaterThan(0);

    const events = labelledEvents();
    expect(events).toHaveLength(1);
    expect(events[0]!.detail).toMatchObject({ signalKey: 'feedback:fm-1', kind: 'feedback', id: 'fm-1', model: 'ckpt-b', modes, source: 'local', inReview: false });
    const outcomeOfHandler = await handleFailureModeVerdicts(h.ports, events);
    expect(outcomeOfHandler).toEqual({ signals: 1, rows: modes.length, skipped: 0 });
    const key = 'raw/metrics/tenant=default/dt=2026-12-02/derived-failure-modes%3Afeedback%3Afm-1.jsonl';
    const rows = await rowsUnder('raw/metrics/tenant=default/');
    // Thumb row of the rated event beside the failure-mode rows.
    expect(rows.filter((r) => r.metric.startsWith('failure_mode.')).map((r) => r.metric).sort()).toEqual(modes.map((m) => `failure_mode.${m}`).sort());
    for (const mode of modes) {
      expect(rows.find((r) => r.metric === `failure_mode.${mode}`)).toEqual({
        id: `failure_mode:fm-1:${mode}`,
        metric: `failure_mode.${mode}`,
        value: 1,
        scope: 'turn',
        user_id: 'u-7',
        workspace_id: 'w-3',
        model: 'ckpt-b',
        experiment: 'exp-1',
        arm: 'b',
        session_id: 'sess-1',
        turn_id: 'turn-1',
        occurred_at: '2026-12-02T09:40:00.000Z',
        received_at: label.labelledAt,
        _key: key,
      });
    }
    const before = Buffer.from((await h.ports.blobs.get(key))!).toString('utf8');
    // A redelivered event overwrites the same object with the same rows; a re-classified signal publishes nothing new.
    await handleFailureModeVerdicts(h.ports, events);
    expect(Buffer.from((await h.ports.blobs.get(key))!).toString('utf8')).toBe(before);
    expect((await classifySignal(deps, (await loadSignal(h.ports, 'feedback', 'fm-1'))!)).outcome).toBe('already-labelled');
    expect(labelledEvents()).toHaveLength(1);
    expect((await rowsUnder('raw/metrics/tenant=default/')).filter((r) => r.metric.startsWith('failure_mode.'))).toHaveLength(modes.length);
  });

  it("writes a tenant's rows under tenant=<t>, and none for reports, labels in review, or other events", async () => {
    const comment = sureComment();
    const acme = scopePortsToTenant(h.ports, 'acme');
    const accepted = await ingestFeedback(acme, feedbackEvent({ eventId: 'fm-acme', kind: 'comment', comment, rating: 'down', reporter: 'u-8' }));
    expect(accepted.status).toBe(202);
    await h.drain();
    await classifySignal({ ports: acme, classifier: fixedClassifier(model) }, (await loadSignal(acme, 'feedback', 'fm-acme'))!);

    // A label the chain is unsure of and has no judge for goes to a person: a guess, not a rate.
    await h.request('POST', '/v1/feedback', { body: feedbackEvent({ eventId: 'fm-unsure', kind: 'comment', comment, rating: 'down' }) });
    await h.drain();
    const unsure: ModeClassifier = { modelVersion: model.modelVersion, taxonomyVersion: model.taxonomyVersion, escalationThreshold: 1, classify: (t) => ({ ...model.classify(t), escalate: true }) };
    const review = await classifySignal({ ports: h.ports, classifier: fixedClassifier(unsure) }, (await loadSignal(h.ports, 'feedback', 'fm-unsure'))!);
    expect(review.outcome).toBe('review');

    const events = labelledEvents();
    expect(events.map((e) => (e.detail as { tenant?: string }).tenant ?? 'default')).toEqual(['acme', 'default']);
    const report: LabelledEvent = { 'detail-type': FAILURE_MODES_LABELLED, detail: { signalKey: 'report:r-1', kind: 'report', id: 'r-1', model: 'ckpt-b', modes: ['scope-calibration'], source: 'local', inReview: false, labelledAt: '2026-12-02T10:00:00.000Z' } };
    const other: LabelledEvent = { type: 'feedback.stored', detail: { eventIds: ['fm-acme'] } };
    const out = await handleFailureModeVerdicts(h.ports, [...events, report, other]);
    expect(out.signals).toBe(1);
    expect(out.skipped).toBe(3);
    const acmeRows = (await rowsUnder('raw/metrics/tenant=acme/')).filter((r) => r.metric.startsWith('failure_mode.'));
    expect(acmeRows.length).toBe(out.rows);
    expect(acmeRows.every((r) => r.user_id === 'u-8' && r._key.endsWith('derived-failure-modes%3Afeedback%3Afm-acme.jsonl'))).toBe(true);
    expect((await rowsUnder('raw/metrics/tenant=default/')).filter((r) => r.metric.startsWith('failure_mode.'))).toEqual([]);
    expect((await h.ports.blobs.list('tenants/acme/raw/metrics/')).keys).toEqual([]);
  });

  it('retries (TransientError) an event whose feedback is not stored, and refuses a malformed one', async () => {
    const missing: LabelledEvent = { type: FAILURE_MODES_LABELLED, detail: { signalKey: 'feedback:ghost', kind: 'feedback', id: 'ghost', model: 'm', modes: ['communication'], source: 'local', inReview: false, labelledAt: '2026-12-02T10:00:00.000Z' } };
    await expect(handleFailureModeVerdicts(h.ports, [missing])).rejects.toBeInstanceOf(TransientError);
    const malformed: LabelledEvent = { type: FAILURE_MODES_LABELLED, detail: { ...(missing.detail as object), modes: ['../../etc'] } };
    await expect(handleFailureModeVerdicts(h.ports, [malformed])).rejects.toThrow(/modes/);
    expect((await h.ports.blobs.list('raw/')).keys).toEqual([]);
  });
});
