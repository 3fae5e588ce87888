import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { trainDefaultLocalClassifier } from '../../../lib/modes/classifier/default-classifier.ts';
import { ValidationError } from '../../../lib/errors.ts';
import { readLabelledSet, toLabelledExamples, type LabelledRecord } from '../../../lib/modes/classifier/labelled-set.ts';
import {
  loadLocalClassifier,
  mergeLabels,
  trainLocalClassifier,
  TrainingDataError,
  type LabelledExample,
  type LocalClassifier,
} from '../../../lib/modes/classifier/local-classifier.ts';
import { signalText } from '../../../lib/modes/classifier/signal-text.ts';
import { defaultTaxonomy, MODE_IDS, reviseTaxonomy } from '../../../lib/modes/taxonomy/taxonomy.ts';

const NOW = new Date('2026-12-02T12:00:00.000Z');
const records = readLabelledSet();
const train = toLabelledExamples(records.filter((r) => r.split === 'train'));
const heldout = records.filter((r) => r.split === 'heldout');
const textOf = (r: LabelledRecord): string => signalText({ title: r.title, body: r.text })!;

/** Micro-averaged F1 of a classifier's labels on held-out records. */
function heldoutMicroF1(model: LocalClassifier, items: LabelledRecord[] = heldout): number {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const r of items) {
    const pred = new Set(model.classify(textOf(r)).labels.map((l) => l.mode));
    const truth = new Set(r.modes);
    for (const p of pred) (truth.has(p) ? tp++ : fp++);
    for (const t of truth) if (!pred.has(t)) fn++;
  }
  return (2 * tp) / (2 * tp + fp + fn);
}
const exactlyRight = (model: LocalClassifier, r: LabelledRecord): boolean => {
  const pred = model.classify(textOf(r)).labels.map((l) => l.mode).sort();
  return JSON.stringify(pred) === JSON.stringify([...r.modes].sort());
};

let model: LocalClassifier;
beforeAll(() => {
  model = trainLocalClassifier(train, defaultTaxonomy(), { now: NOW });
});

describe('the labelled set', () => {
  it('has several hundred records across every mode, praise, multi-label and ambiguous ones, with a fixed held-out part', () => {
    expect(records.length).toBeGreaterThanOrEqual(400);
    expect(heldout.length).toBeGreaterThanOrEqual(80);
    for (const mode of MODE_IDS) {
      expect(records.filter((r) => r.modes.includes(mode) && r.split === 'heldout').length, mode).toBeGreaterThanOrEqual(5);
    }
    expect(records.filter((r) => r.modes.length === 0).length).toBeGreaterThanOrEqual(20);
    expect(records.filter((r) => r.modes.length > 1).length).toBeGreaterThanOrEqual(25);
    expect(records.filter((r) => r.ambiguous).length).toBeGreaterThanOrEqual(15);
    expect(new Set(records.map((r) => r.surface)).size).toBeGreaterThanOrEqual(4);
  });
});

describe('trainLocalClassifier', () => {
  it('learns: held-out micro-F1 well above what the same model reaches on shuffled labels', () => {
    const f1 = heldoutMicroF1(model);
    // A chance-level labeller that guesses one mode by frequency gets ≈ 0.13; the trained model reaches ≈ 0.6.
    expect(f1).toBeGreaterThanOrEqual(0.45);
    // Same texts, same label counts, labels rotated between examples: no signal left to learn.
    const rotated: LabelledExample[] = train.map((e, i) => ({ ...e, modes: train[(i * 7 + 13) % train.length]!.modes }));
    const noise = trainLocalClassifier(rotated, defaultTaxonomy(), { now: NOW, folds: 3 });
    expect(heldoutMicroF1(noise)).toBeLessThan(0.3);
    expect(f1 - heldoutMicroF1(noise)).toBeGreaterThan(0.2);
  });

  it('describes itself: version, taxonomy, validation choices and training counts', () => {
    expect(model.modelVersion).toMatch(/^tfidf-lr-t1-[0-9a-f]{12}$/);
    expect(model.taxonomyVersion).toBe(1);
    expect(model.modes).toEqual([...MODE_IDS]);
    expect(model.trainedAt).toBe(NOW.toISOString());
    expect(model.training.examples).toBe(train.length);
    expect(model.training.positives['scope-calibration']).toBe(train.filter((e) => e.modes.includes('scope-calibration')).length);
    expect(model.validation.folds).toBe(5);
    expect(model.validation.microF1).toBeGreaterThan(0.4);
    expect(model.escalationThreshold).toBe(model.validation.escalation.threshold);
  });

  it('is deterministic: the same data gives the same version and the same answers', () => {
    const again = trainLocalClassifier([...train].reverse().reverse(), defaultTaxonomy(), { now: NOW });
    expect(again.modelVersion).toBe(model.modelVersion);
    for (const r of heldout.slice(0, 20)) expect(again.classify(textOf(r))).toEqual(model.classify(textOf(r)));
  });

  it('refuses too little data and bad options with named errors', () => {
    expect(() => trainLocalClassifier(train.slice(0, 5), defaultTaxonomy())).toThrow(TrainingDataError);
    expect(() => trainLocalClassifier(train, defaultTaxonomy(), { folds: 1 })).toThrow(ValidationError);
    expect(() => trainLocalClassifier(train, defaultTaxonomy(), { c: 0 })).toThrow(ValidationError);
  });
});

describe('classify', () => {
  it('answers calibrated scores for every mode and a consistent label set, confidence and escalation', () => {
    for (const r of heldout) {
      const c = model.classify(textOf(r));
      expect(c.scores.map((s) => s.mode).sort()).toEqual([...MODE_IDS].sort());
      for (let i = 1; i < c.scores.length; i++) expect(c.scores[i - 1]!.probability).toBeGreaterThanOrEqual(c.scores[i]!.probability);
      for (const l of c.labels) expect(c.scores).toContainEqual(l);
      expect(c.confidence).toBeGreaterThan(0);
      expect(c.confidence).toBeLessThan(1);
      expect(c.escalate).toBe(c.confidence < model.escalationThreshold);
      expect(c).toMatchObject({ truncated: false, modelVersion: model.modelVersion, taxonomyVersion: 1 });
    }
  });

  it('says "nothing to classify" for empty, blank and symbol-only text instead of guessing', () => {
    for (const text of ['', '   \n\t ', '!!! ??? ...', '🎉🎉🎉']) {
      const c = model.classify(text);
      expect(c.labels).toEqual([]);
      expect(c.confidence).toBe(0);
      expect(c.escalate).toBe(false);
      expect(c.unclassifiable).toBe(text.trim() === '' ? 'empty' : 'no-features');
    }
  });

  it('reads only the first maxChars of a huge text, quickly, and says so', () => {
    const complaint = 'I asked for a one line fix and it reformatted every file in the repository. ';
    const huge = complaint + 'lorem ipsum dolor '.repeat(200_000); // ≈ 3.6 MB
    const t0 = performance.now();
    const c = model.classify(huge);
    expect(performance.now() - t0).toBeLessThan(500);
    expect(c.truncated).toBe(true);
    expect(c.unclassifiable).toBeUndefined();
    expect(model.classify(complaint.repeat(3)).truncated).toBe(false);
  });

  it('throws a ValidationError for non-text input', () => {
    for (const bad of [42, null, undefined, { comment: 'x' }, ['a']]) {
      expect(() => model.classify(bad as unknown as string)).toThrow(ValidationError);
    }
  });
});

describe('serialisation', () => {
  it('round-trips through JSON to a classifier with identical outputs', () => {
    const json = JSON.stringify(model);
    const loaded = loadLocalClassifier(JSON.parse(json));
    expect(loaded.modelVersion).toBe(model.modelVersion);
    expect(loaded.escalationThreshold).toBe(model.escalationThreshold);
    for (const r of heldout) expect(loaded.classify(textOf(r))).toEqual(model.classify(textOf(r)));
    expect(JSON.stringify(loaded)).toBe(json);
    expect(json.length).toBeLessThan(2_000_000);
  });

  it('rejects what is not a serialised classifier, or one whose arrays do not fit together', () => {
    expect(() => loadLocalClassifier({})).toThrow(ValidationError);
    expect(() => loadLocalClassifier('model')).toThrow(ValidationError);
    const s = model.toJSON();
    expect(() => loadLocalClassifier({ ...s, bias: s.bias.slice(1) })).toThrow(/inconsistent/);
    expect(() => loadLocalClassifier({ ...s, weights: 'AAAAAA==' })).toThrow(/inconsistent/); // one float
    expect(() => loadLocalClassifier({ ...s, weights: 'AAAA' })).toThrow(/not a base64 float32 array/); // three bytes
  });
});

describe('retraining with human labels', () => {
  it('mergeLabels lets a human label override a judge label and a seed label of the same id', () => {
    const seed: LabelledExample = { id: 'x', text: 't', modes: ['other'], labelSource: 'seed' };
    const judge: LabelledExample = { ...seed, modes: ['communication'], labelSource: 'judge' };
    const human: LabelledExample = { ...seed, modes: ['scope-calibration'], labelSource: 'human' };
    expect(mergeLabels([seed], [human], [judge])).toEqual([human]);
    expect(mergeLabels([human], [seed])).toEqual([human]);
    expect(mergeLabels([seed, { ...seed, id: 'y' }], [judge])).toEqual([judge, { ...seed, id: 'y' }]);
  });

  it('changes predictions: items the model got wrong are mostly right after humans label them', () => {
    const wrong = heldout.filter((r) => !exactlyRight(model, r));
    expect(wrong.length).toBeGreaterThan(10);
    const human: LabelledExample[] = wrong.map((r) => ({ id: r.id, text: textOf(r), modes: r.modes, labelSource: 'human' }));
    const retrained = trainLocalClassifier(mergeLabels(train, human), defaultTaxonomy(), { now: NOW, folds: 3 });
    expect(retrained.modelVersion).not.toBe(model.modelVersion);
    expect(retrained.training.labelSources).toEqual({ seed: train.length, human: wrong.length });
    const fixed = wrong.filter((r) => exactlyRight(retrained, r)).length;
    expect(fixed / wrong.length).toBeGreaterThan(0.6);
  });

  it('follows a taxonomy revision: retired modes map to their successor, new modes are scored', () => {
    const v2 = reviseTaxonomy(
      defaultTaxonomy(),
      {
        remove: [{ id: 'ui-execution', mergedInto: 'other' }],
        add: [{ id: 'latency', name: 'Latency', definition: 'Too slow to be useful.', examples: ['3 minutes for one line'] }],
      },
      NOW,
    );
    const m2 = trainLocalClassifier(train, v2, { now: NOW, folds: 3 });
    expect(m2.taxonomyVersion).toBe(2);
    expect(m2.modes).not.toContain('ui-execution');
    expect(m2.modes).toContain('latency');
    expect(m2.training.positives.other).toBe(train.filter((e) => e.modes.includes('other') || e.modes.includes('ui-execution')).length);
    expect(m2.training.positives.latency).toBe(0);
    const c = m2.classify('The modal close button is off-screen on mobile and the layout breaks at 768px');
    expect(c.labels[0]?.mode).toBe('other');
    expect(c.scores.find((s) => s.mode === 'latency')!.probability).toBeLessThan(0.05);
  });
});

describe('trainDefaultLocalClassifier', () => {
  it('trains on the whole labelled set with gathered labels merged over it', () => {
    const first = records[0]!;
    const m = trainDefaultLocalClassifier({
      now: NOW,
      folds: 3,
      labels: [
        { id: first.id, text: textOf(first), modes: ['other'], labelSource: 'human' },
        { id: 'fb-new-1', text: 'The agent panel crashes every time I open a second window', modes: ['other'], labelSource: 'judge', weight: 0.5 },
      ],
    });
    expect(m.training.examples).toBe(records.length + 1);
    expect(m.training.labelSources).toEqual({ seed: records.length - 1, human: 1, judge: 1 });
  });
});

describe('readLabelledSet', () => {
  it('names the line of a bad record and refuses duplicate ids', () => {
    const dir = mkdtempSync(join(tmpdir(), 'flywheel-labelled-'));
    try {
      const good = JSON.stringify(records[0]);
      const file = join(dir, 'set.jsonl');
      writeFileSync(file, `${good}\n\n{"id":"x"}\n`);
      expect(() => readLabelledSet(file)).toThrow(/set\.jsonl:3: invalid labelled record/);
      writeFileSync(file, `${good}\nnot json\n`);
      expect(() => readLabelledSet(file)).toThrow(/set\.jsonl:2: not JSON/);
      writeFileSync(file, `${good}\n${good}\n`);
      expect(() => readLabelledSet(file)).toThrow(/duplicate id/);
      writeFileSync(file, `${JSON.stringify({ ...records[0], modes: ['Not A Mode'] })}\n`);
      expect(() => readLabelledSet(file)).toThrow(ValidationError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
