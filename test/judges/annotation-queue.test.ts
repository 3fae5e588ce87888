/**
 * Annotation queues and gold sets over the local ports (SQLite, files): what an item asks for, labels checked against
 * it (a bad one named `labels.<id>`), nobody labelling an item twice, the two-person slice needing two different
 * people, listings by queue and reason (newest first, paged), gold items with their lengths.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConflictError, ValidationError } from '../../lib/errors.ts';
import { evalKeys } from '../../lib/harness/attempt/record-keys.ts';
import { attemptRecord } from '../../lib/harness/attempt/record-codecs.ts';
import { enqueueAnnotation, getAnnotation, labelAnnotation, listAnnotations } from '../../lib/judges/annotation/annotation-queue.ts';
import { inFraction, subjectKey } from '../../lib/judges/annotation/annotation-item.ts';
import { addToGoldSet, createGoldSet, postAnnotation, readGoldItems, showGoldSet } from '../../lib/judges/annotation/gold-sets.ts';
import { annotationIndexRecord, annotationItemRecord } from '../../lib/judges/annotation/record-codecs.ts';
import { annotationKeys } from '../../lib/judges/annotation/record-keys.ts';
import { MalformedRecordError } from '../../lib/shared/record-codec.ts';
import { ensureTaxonomy } from '../../lib/modes/taxonomy/taxonomy-store.ts';
import { registryKeys } from '../../lib/registry/record-keys.ts';
import type { Subject } from '../../lib/judges/schemas.ts';
import { storeFeedback, tempPorts } from '../modes/support/modes-fixture.ts';

let env: ReturnType<typeof tempPorts> | undefined;
afterEach(() => env?.cleanup());

/** Ports whose clock moves one second per call, so items have distinct creation times. */
function steppedPorts() {
  let t = Date.parse('2026-12-01T00:00:00Z');
  env = tempPorts(() => new Date((t += 1000)));
  return env.ports;
}

async function issuesOf(p: Promise<unknown>): Promise<string[]> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).issues.map((i) => i.path);
}

const attempt = (n: number): Extract<Subject, { kind: 'attempt' }> => ({ kind: 'attempt', runId: 'run-1', attemptId: `ATTEMPT#calc/add#strict#${n}` });

async function storeAttempt(ports: ReturnType<typeof steppedPorts>, n: number, diff: string) {
  await ports.blobs.put(`evals/run-1/${n}.diff`, diff);
  const key = evalKeys.attempt('run-1', 'calc/add', 'strict', n);
  const usage = { promptTokens: 1, completionTokens: 1, cachedTokens: 0 };
  await ports.records.put({
    ...attemptRecord.encode({
      kind: 'eval-attempt', runId: 'run-1', attemptId: `run-1.calc__add.strict.${n}`, taskId: 'calc/add', suite: 'calc', mode: 'strict', n, status: 'passed',
      usage, usageAllTries: usage, turns: 1, durationMs: 1, diffKey: `evals/run-1/${n}.diff`, model: 'm', tries: 1, history: [],
      startedAt: '2026-12-01T00:00:00Z', finishedAt: '2026-12-01T00:00:01Z', pk: key.pk, sk: key.sk,
    } as never),
    ...key,
  });
}

describe('an annotation item', () => {
  it('asks a signal for every mode of the taxonomy; modes left out are no, a value out of the vocabulary is named', async () => {
    const ports = steppedPorts();
    const eventId = await storeFeedback(ports, { comment: 'It rewrote the whole module when I asked for one line.' });
    const { item, created } = await enqueueAnnotation(ports, { subject: { kind: 'signal', signalKey: `feedback:${eventId}` }, reason: 'production-sample' });
    const taxonomy = await ensureTaxonomy(ports.records);
    expect(created).toBe(true);
    expect(item.asks).toEqual(taxonomy.modes.map((m) => `mode:${m.id}`));
    expect(item.length).toBe('It rewrote the whole module when I asked for one line.'.length);
    expect(item.queue).toBe('production-sample');
    const mode = taxonomy.modes[0]!.id;
    expect(await issuesOf(labelAnnotation(ports, item.id, { annotator: 'ana', labels: { [`mode:${mode}`]: 'maybe' } }))).toEqual([`labels.mode:${mode}`]);
    expect(await issuesOf(labelAnnotation(ports, item.id, { annotator: 'ana', labels: { c2: 'pass' } }))).toEqual(['labels.c2']);
    const done = await labelAnnotation(ports, item.id, { annotator: 'ana', labels: { [`mode:${mode}`]: 'yes' } });
    expect(done.status).toBe('done');
    expect(done.labels![`mode:${mode}`]).toBe('yes');
    expect(Object.values(done.labels!).filter((v) => v === 'no')).toHaveLength(taxonomy.modes.length - 1);
    // The same subject queued again is the same item.
    expect((await enqueueAnnotation(ports, { subject: { kind: 'signal', signalKey: `feedback:${eventId}` }, reason: 'production-sample' })).created).toBe(false);
  });

  it('needs every criterion of an attempt; a missing or bad one is named labels.<id>', async () => {
    const ports = steppedPorts();
    const { item } = await enqueueAnnotation(ports, { subject: attempt(0), reason: 'production-sample', labels: ['c1', 'c2'] });
    expect(await issuesOf(labelAnnotation(ports, item.id, { annotator: 'ana', labels: { c1: 'pass' } }))).toEqual(['labels.c2']);
    expect(await issuesOf(labelAnnotation(ports, item.id, { annotator: 'ana', labels: { c1: 'pass', c2: 'maybe' } }))).toEqual(['labels.c2']);
    expect(await issuesOf(labelAnnotation(ports, item.id, { annotator: 'ana', labels: { c1: 'pass', c2: 'fail', preference: 'a' } }))).toEqual(['labels.preference']);
    expect((await getAnnotation(ports, item.id)).status).toBe('pending');
    const done = await labelAnnotation(ports, item.id, { annotator: 'ana', labels: { c1: 'pass', c2: 'not-applicable' } });
    expect(done).toMatchObject({ status: 'done', annotator: 'ana', labels: { c1: 'pass', c2: 'not-applicable' } });
    // Done: nobody labels it again, the same person least of all.
    await expect(labelAnnotation(ports, item.id, { annotator: 'ana', labels: { c1: 'pass', c2: 'pass' } })).rejects.toBeInstanceOf(ConflictError);
    await expect(labelAnnotation(ports, item.id, { annotator: 'bob', labels: { c1: 'pass', c2: 'pass' } })).rejects.toBeInstanceOf(ConflictError);
  });

  it("reads an attempt's criteria from its task rubric and its length from its diff; refuses labels of another subject kind", async () => {
    const ports = steppedPorts();
    await storeAttempt(ports, 1, 'diff --git a/x b/x\n+one line\n');
    await ports.records.put({ ...registryKeys.task('calc', 'calc/add'), suite: 'calc', taskId: 'calc/add', task: { rubric: [{ criterion: 'minimal change' }, { id: 'tests', criterion: 'adds a test' }] } });
    const { item } = await enqueueAnnotation(ports, { subject: { kind: 'attempt', runId: 'run-1', attemptId: 'run-1.calc__add.strict.1' }, reason: 'production-sample' });
    expect(item.asks).toEqual(['c1', 'tests']);
    expect(item.length).toBe('diff --git a/x b/x\n+one line\n'.length);
    expect(await issuesOf(enqueueAnnotation(ports, { subject: attempt(9), reason: 'production-sample' }))).toEqual(['labels']);
    expect(await issuesOf(enqueueAnnotation(ports, { subject: attempt(1), reason: 'production-sample', labels: ['preference'] }))).toEqual(['labels[0]']);
    expect(await issuesOf(enqueueAnnotation(ports, { subject: attempt(1), reason: 'because' }))).toEqual(['reason']);
  });

  it('on the two-person slice needs two different people and keeps both labels', async () => {
    const ports = steppedPorts();
    const { item } = await enqueueAnnotation(ports, { subject: { kind: 'pair', a: attempt(1), b: attempt(2) }, reason: 'two-person-slice', queue: 'pairs' }, { needs: 2 });
    expect(item.asks).toEqual(['preference']);
    const first = await labelAnnotation(ports, item.id, { annotator: 'ana', labels: { preference: 'a' } });
    expect(first.status).toBe('pending');
    await expect(labelAnnotation(ports, item.id, { annotator: 'ana', labels: { preference: 'b' } })).rejects.toThrow(/ana has labelled/);
    const second = await labelAnnotation(ports, item.id, { annotator: 'bob', labels: { preference: 'tie' } });
    expect(second).toMatchObject({ status: 'done', labels: { preference: 'a' }, annotator: 'ana', secondLabels: { preference: 'tie' }, secondAnnotator: 'bob' });
    await expect(labelAnnotation(ports, item.id, { annotator: 'cy', labels: { preference: 'a' } })).rejects.toBeInstanceOf(ConflictError);
  });

  it('is one item when two writers queue the same subject at once, listed once', async () => {
    const ports = steppedPorts();
    const request = { subject: attempt(3), reason: 'disagreement', labels: ['c1'] };
    const results = await Promise.all([enqueueAnnotation(ports, request), enqueueAnnotation(ports, request), enqueueAnnotation(ports, request)]);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.item.id)).size).toBe(1);
    expect((await listAnnotations(ports, { reason: 'disagreement' })).items).toHaveLength(1);
    expect((await ports.records.query({ partition: annotationKeys.listing('all', 'pending') })).items).toHaveLength(1);
  });

  it('is stored through its codec: a malformed record fails where it is read, naming the field', async () => {
    const ports = steppedPorts();
    const { item } = await enqueueAnnotation(ports, { subject: attempt(0), reason: 'production-sample', labels: ['c1'] });
    await ports.records.put({ ...annotationItemRecord.encode(item), needs: 3 });
    await expect(getAnnotation(ports, item.id)).rejects.toThrow(MalformedRecordError);
    await expect(getAnnotation(ports, item.id)).rejects.toThrow(/field "needs"/);
  });
});

describe('a gold set', () => {
  it('queues its subjects, double-labels a deterministic slice, lists by queue and reason newest first, and reads back gold items', async () => {
    const ports = steppedPorts();
    const subjects: Subject[] = Array.from({ length: 24 }, (_, i) => attempt(i));
    const { goldSet, added } = await createGoldSet(ports, { name: 'rubric-gold', judge: 'rubric-judge', labels: ['c1', 'c2'], twoPersonFraction: 0.25, subjects });
    expect(goldSet).toMatchObject({ subjectKind: 'attempt', twoPersonFraction: 0.25 });
    expect(added).toBe(24);
    const inSlice = subjects.filter((s) => inFraction(`rubric-gold\n${subjectKey(s)}`, 0.25));
    expect(inSlice.length).toBeGreaterThan(0);
    expect(inSlice.length).toBeLessThan(24);

    const slice = await listAnnotations(ports, { queue: 'gold:rubric-gold', reason: 'two-person-slice' });
    expect(slice.items.map((i) => i.subjectKey).sort()).toEqual(inSlice.map(subjectKey).sort());
    expect(slice.items.every((i) => i.needs === 2 && i.goldSet === 'rubric-gold')).toBe(true);

    // Paged, newest first, and one listing per filter.
    const page1 = await listAnnotations(ports, { queue: 'gold:rubric-gold', limit: 10 });
    const page2 = await listAnnotations(ports, { queue: 'gold:rubric-gold', limit: 10, cursor: page1.cursor });
    expect(page1.items).toHaveLength(10);
    expect(page1.items[0]!.createdAt > page1.items[9]!.createdAt).toBe(true);
    expect(page1.items[9]!.createdAt > page2.items[0]!.createdAt).toBe(true);
    expect((await listAnnotations(ports, { reason: 'gold-set', limit: 500 })).items).toHaveLength(24 - inSlice.length);
    expect((await listAnnotations(ports, { limit: 500 })).items).toHaveLength(24);

    // Label everything: one person outside the slice, two inside it.
    for (const s of subjects) {
      const item = (await postAnnotation(ports, { goldSet: 'rubric-gold', subject: s })).item;
      await labelAnnotation(ports, item.id, { annotator: 'ana', labels: { c1: 'pass', c2: 'fail' } });
      if (item.needs === 2) await labelAnnotation(ports, item.id, { annotator: 'bob', labels: { c1: 'pass', c2: 'pass' } });
    }
    expect((await listAnnotations(ports, { queue: 'gold:rubric-gold', status: 'pending' })).items).toEqual([]);
    const done = await listAnnotations(ports, { queue: 'gold:rubric-gold', status: 'done', limit: 500 });
    expect(done.items).toHaveLength(24);
    expect(await showGoldSet(ports, 'rubric-gold')).toMatchObject({ pending: 0, done: 24, twoPerson: inSlice.length });

    const gold = await readGoldItems(ports, 'rubric-gold');
    expect(gold).toHaveLength(24);
    const doubled = gold.filter((g) => g.secondLabels);
    expect(doubled).toHaveLength(inSlice.length);
    expect(doubled[0]).toMatchObject({ labels: { c1: 'pass', c2: 'fail' }, secondLabels: { c1: 'pass', c2: 'pass' }, annotators: ['ana', 'bob'] });
    // The pending rows moved: none is left under pending.
    const pendingRows = await ports.records.query({ partition: annotationKeys.listing('q:gold:rubric-gold', 'pending') });
    expect(pendingRows.items).toEqual([]);
  });

  it('refuses subjects of another kind, label ids of two kinds and a taken name, naming the field', async () => {
    const ports = steppedPorts();
    expect(await issuesOf(createGoldSet(ports, { name: 'mixed', judge: 'j', labels: ['c1', 'preference'] }))).toEqual(['labels']);
    await createGoldSet(ports, { name: 'fm-gold', judge: 'fm-judge', labels: ['mode:scope-calibration'] });
    await expect(createGoldSet(ports, { name: 'fm-gold', judge: 'fm-judge', labels: ['mode:scope-calibration'] })).rejects.toBeInstanceOf(ConflictError);
    expect(await issuesOf(addToGoldSet(ports, 'fm-gold', { subjects: [attempt(0)] }))).toEqual(['subjects[0]']);
    expect(await issuesOf(postAnnotation(ports, { goldSet: 'fm-gold', subject: { kind: 'signal' } }))).toEqual(['subject.signalKey']);
  });

  it('reserves the gold: and drift: queues, and reads as gold only what the gold set added', async () => {
    const ports = steppedPorts();
    await createGoldSet(ports, { name: 'fm-gold', judge: 'fm-judge', labels: ['mode:scope-calibration'], twoPersonFraction: 0 });
    const signal = (n: number): Subject => ({ kind: 'signal', signalKey: `feedback:e${n}` });
    // Posted into a gold set's queue (or a drift queue) it would pose as gold (or as a production verdict): refused.
    for (const queue of ['gold:fm-gold', 'gold:other', 'drift:fm-judge']) {
      expect(await issuesOf(postAnnotation(ports, { subject: signal(1), reason: 'gold-set', queue, labels: ['mode:scope-calibration'] }))).toEqual(['queue']);
      expect(await issuesOf(enqueueAnnotation(ports, { subject: signal(1), reason: 'disagreement', queue, labels: ['mode:scope-calibration'] }))).toEqual(['queue']);
    }
    // A gold set may not fill another's queue; other queues with a colon are anyone's.
    expect(await issuesOf(enqueueAnnotation(ports, { subject: signal(1), reason: 'gold-set', queue: 'gold:fm-gold', labels: ['mode:scope-calibration'] }, { goldSet: 'other' }))).toEqual(['queue']);
    expect((await postAnnotation(ports, { subject: signal(1), reason: 'production-sample', queue: 'team:golden', labels: ['mode:scope-calibration'] })).created).toBe(true);

    const added = (await postAnnotation(ports, { goldSet: 'fm-gold', subject: signal(2) })).item;
    await labelAnnotation(ports, added.id, { annotator: 'ana', labels: { 'mode:scope-calibration': 'yes' } });
    // An item in the gold queue the gold set did not add (written before the prefix was reserved): not gold.
    const spoofed = {
      id: 'spoofed-item-0000000',
      queue: 'gold:fm-gold',
      reason: 'gold-set' as const,
      subject: signal(3),
      subjectKey: subjectKey(signal(3)),
      asks: ['mode:scope-calibration'],
      needs: 1 as const,
      status: 'done' as const,
      createdAt: '2026-12-02T00:00:00.000Z',
      revision: 1,
      labels: { 'mode:scope-calibration': 'no' },
      annotator: 'mallory',
      labelledAt: '2026-12-02T00:00:00.000Z',
    };
    await ports.records.put(annotationItemRecord.encode(spoofed));
    await ports.records.put(annotationIndexRecord.encode({ id: spoofed.id, listing: 'q:gold:fm-gold', status: 'done', createdAt: spoofed.createdAt }));
    expect((await listAnnotations(ports, { queue: 'gold:fm-gold', status: 'done' })).items.map((i) => i.id).sort()).toEqual([added.id, spoofed.id].sort());
    const gold = await readGoldItems(ports, 'fm-gold');
    expect(gold.map((g) => g.id)).toEqual([added.id]);
    expect(gold[0]).toMatchObject({ labels: { 'mode:scope-calibration': 'yes' }, annotators: ['ana'] });
  });
});
