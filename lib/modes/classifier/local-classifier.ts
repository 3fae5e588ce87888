/**
 * The local failure-mode classifier: the cheap first link of the classifier chain. It labels every signal in a few
 * tens of microseconds, with no model endpoint, and says how sure it is so the chain escalates only the unsure ones to
 * the LLM judge.
 *
 * Model: TF-IDF over word unigrams + bigrams and character 3–5-grams inside word boundaries (typos and inflections),
 * then one-vs-rest L2 logistic regression per mode (multi-label: a comment can be both "scope-calibration" and
 * "communication"), class-balanced, trained by L-BFGS. Probabilities are Platt-calibrated on out-of-fold scores from
 * k-fold cross-validation of the training set, and the escalation threshold is chosen on those same out-of-fold
 * predictions. See README.md in this folder for why it is hand-written rather than a library.
 *
 * A trained classifier serialises to JSON (`toJSON`, `loadLocalClassifier`) so the pipeline stores it as a blob;
 * a loaded classifier gives bit-identical outputs.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { FlywheelError, ValidationError } from '../../errors.ts';
import { ModesErrorNames } from '../modes-errors.ts';
import { modeIds, OTHER_MODE, resolveMode, type Taxonomy } from '../taxonomy/taxonomy.ts';
import { chooseDecisionRule, decide, type DecisionRule } from './decision-rule.ts';
import { chooseEscalationThreshold, topMargin, type EscalationChoice } from './escalation-threshold.ts';
import { decodeFloat32, encodeFloat32 } from './float-codec.ts';
import { fitLogisticRegression, type SparseRows } from './logistic-regression.ts';
import { fitPlatt, type PlattParams } from './platt-calibration.ts';
import { fitTfidf, type TfidfVectorizer, type TfidfState, restoreTfidf } from './tfidf-vectorizer.ts';

/** A labelled signal to learn from. */
export interface LabelledExample {
  /** Stable id (feedback event id, report id, or a labelled-set id): a later label of the same id replaces an earlier one. */
  id: string;
  /** The text the classifier sees (see `signalText`). */
  text: string;
  /**
   * Mode ids. `[]` means "no failure mode" (praise, a neutral remark); ids from older taxonomy versions are mapped
   * with `resolveMode`, unknown ids are dropped.
   */
  modes: string[];
  /** Who labelled it. When `mergeLabels` sees the same id twice, human beats judge beats seed. */
  labelSource?: 'seed' | 'judge' | 'human';
  /** Relative weight in the loss (default 1; e.g. 0.5 for judge labels). */
  weight?: number;
}

/** One mode and its calibrated probability. */
export interface ModeProbability {
  mode: string;
  probability: number;
}

/** What `classify` answers. */
export interface Classification {
  /**
   * The modes it names, most probable first: the top mode when its probability reaches the model's `decision.topFloor`,
   * plus any other at or above `decision.extraThreshold` (both chosen on validation). `[]` means no failure mode was
   * found (praise, a neutral remark, or nothing to classify).
   */
  labels: ModeProbability[];
  /** Every live mode of the model's taxonomy, most probable first. */
  scores: ModeProbability[];
  /**
   * 0–1: the estimated probability that `labels` is exactly right: the margin between the two most probable modes,
   * Platt-scaled against how often the label set was exactly right on validation (out-of-fold). The eval's
   * reliability table checks it on held-out data.
   */
  confidence: number;
  /** `confidence < escalationThreshold`: the chain should ask the LLM judge. Never true for unclassifiable input. */
  escalate: boolean;
  /** Set when there was nothing to classify: `empty` (blank text) or `no-features` (no known word or character n-gram). */
  unclassifiable?: 'empty' | 'no-features';
  /** The text was longer than `maxChars` and only its start was read. */
  truncated: boolean;
  modelVersion: string;
  taxonomyVersion: number;
}

/** Quality of the model on its own training set, by k-fold cross-validation (out-of-fold predictions). */
export interface ValidationSummary {
  folds: number;
  examples: number;
  /** Micro-averaged F1 of the out-of-fold labels under `decision`. */
  microF1: number;
  /** The label rule chosen on the out-of-fold predictions. */
  decision: DecisionRule;
  /** Platt scaling of the top-two margin → P(label set exactly right), fitted out of fold. */
  confidenceCalibration: PlattParams;
  /** Share of out-of-fold items whose label set was exactly right. */
  exactMatch: number;
  escalation: EscalationChoice;
  /** The thresholds other targets would have chosen (accuracy 0.6 … 0.9), to pick a cost / quality trade-off. */
  escalationCurve: EscalationChoice[];
}

export interface TrainOptions {
  /** Inverse L2 strength of each logistic regression (sklearn's C). Default 4. */
  c?: number;
  /** Cross-validation folds for calibration and the threshold (≥ 2). Default 5. */
  folds?: number;
  /** Accuracy (exact label set) the non-escalated items should reach on validation. Default 0.8. */
  targetAccuracy?: number;
  /** Characters read from a text; the rest is ignored and `truncated` is set. Default 20,000. */
  maxChars?: number;
  /** Minimum document frequency of a feature. Default 2. */
  minDf?: number;
  /** Fixed training timestamp (tests); default now. */
  now?: Date;
}

export interface LocalClassifier {
  /** `tfidf-lr-t<taxonomyVersion>-<12 hex of a hash of the data and options>`: same data, same version. */
  readonly modelVersion: string;
  readonly taxonomyVersion: number;
  /** The modes it scores, in taxonomy order. */
  readonly modes: readonly string[];
  /** Classifications with `confidence` below this escalate. */
  readonly escalationThreshold: number;
  readonly validation: ValidationSummary;
  readonly trainedAt: string;
  /** Examples and positives per mode it was trained on. */
  readonly training: { examples: number; positives: Record<string, number>; labelSources: Record<string, number> };
  /**
   * Labels one text.
   * @example
   * const c = model.classify('It rewrote the whole file when I asked for a one-line fix');
   * // c.labels → [{ mode: 'scope-calibration', probability: 0.93 }], c.escalate → false
   * @throws ValidationError when `text` is not a string.
   */
  classify(text: string): Classification;
  /** The model as JSON-safe data; `loadLocalClassifier(JSON.parse(JSON.stringify(m)))` behaves identically. */
  toJSON(): SerializedLocalClassifier;
}

/** Thrown when the training data cannot produce a model (too few examples, a mode without positives is fine). */
export class TrainingDataError extends FlywheelError {
  constructor(message: string) {
    super(ModesErrorNames.trainingData, message);
  }
}

const DEFAULTS = { c: 4, folds: 5, targetAccuracy: 0.8, maxChars: 20_000, minDf: 2 } as const;
const MIN_EXAMPLES = 10;

export const SERIALIZED_FORMAT = 'flywheel.local-classifier';

const EscalationChoiceSchema = z.object({
  threshold: z.number(),
  targetAccuracy: z.number(),
  reached: z.boolean(),
  coverage: z.number(),
  acceptedAccuracy: z.number(),
});

const SerializedSchema = z.object({
  format: z.literal(SERIALIZED_FORMAT),
  formatVersion: z.literal(1),
  modelVersion: z.string(),
  trainedAt: z.string(),
  taxonomyVersion: z.int().positive(),
  modes: z.array(z.string()).min(1),
  options: z.object({ c: z.number(), folds: z.int(), targetAccuracy: z.number(), maxChars: z.int(), minDf: z.int() }),
  vectorizer: z.object({
    wordVocab: z.array(z.string()),
    wordIdf: z.string(),
    charVocab: z.array(z.string()),
    charIdf: z.string(),
  }),
  /** Float32 weights, mode-major (`modes.length × features`), base64. */
  weights: z.string(),
  bias: z.array(z.number()),
  calibration: z.array(z.object({ a: z.number(), b: z.number() })),
  escalationThreshold: z.number(),
  validation: z.object({
    folds: z.int(),
    examples: z.int(),
    microF1: z.number(),
    decision: z.object({ topFloor: z.number(), extraThreshold: z.number() }),
    confidenceCalibration: z.object({ a: z.number(), b: z.number() }),
    exactMatch: z.number(),
    escalation: EscalationChoiceSchema,
    escalationCurve: z.array(EscalationChoiceSchema),
  }),
  training: z.object({
    examples: z.int(),
    positives: z.record(z.string(), z.int()),
    labelSources: z.record(z.string(), z.int()),
  }),
});
export type SerializedLocalClassifier = z.infer<typeof SerializedSchema>;

const sigmoid = (z: number): number => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));
function calibrateConfidence(margin: number, cal: PlattParams): number {
  return sigmoid(cal.a * margin + cal.b);
}

/** The trained parts, shared by a freshly trained and a loaded classifier. */
interface ModelParts {
  modelVersion: string;
  trainedAt: string;
  taxonomyVersion: number;
  modes: string[];
  options: Required<Omit<TrainOptions, 'now'>>;
  vectorizer: TfidfVectorizer;
  weights: Float32Array;
  bias: number[];
  calibration: PlattParams[];
  escalationThreshold: number;
  validation: ValidationSummary;
  training: LocalClassifier['training'];
}

/** Raw (uncalibrated) logits of one vectorised text for every mode. */
function rawLogits(parts: Pick<ModelParts, 'weights' | 'bias' | 'modes' | 'vectorizer'>, idx: Int32Array, val: Float32Array): Float64Array {
  const k = parts.modes.length;
  const f = parts.vectorizer.features;
  const out = new Float64Array(k);
  for (let m = 0; m < k; m++) {
    let z = parts.bias[m] ?? 0;
    const base = m * f;
    for (let j = 0; j < idx.length; j++) z += (parts.weights[base + idx[j]!] ?? 0) * val[j]!;
    out[m] = z;
  }
  return out;
}

class TrainedLocalClassifier implements LocalClassifier {
  readonly #p: ModelParts;
  constructor(parts: ModelParts) {
    this.#p = parts;
  }
  get modelVersion() {
    return this.#p.modelVersion;
  }
  get taxonomyVersion() {
    return this.#p.taxonomyVersion;
  }
  get modes(): readonly string[] {
    return this.#p.modes;
  }
  get escalationThreshold() {
    return this.#p.escalationThreshold;
  }
  get validation() {
    return this.#p.validation;
  }
  get trainedAt() {
    return this.#p.trainedAt;
  }
  get training() {
    return this.#p.training;
  }

  classify(text: string): Classification {
    if (typeof text !== 'string') {
      throw new ValidationError('classify expects a string', [{ path: 'text', message: `expected string, got ${text === null ? 'null' : typeof text}` }]);
    }
    const p = this.#p;
    const truncated = text.length > p.options.maxChars;
    const read = truncated ? text.slice(0, p.options.maxChars) : text;
    const base = { truncated, modelVersion: p.modelVersion, taxonomyVersion: p.taxonomyVersion };
    if (read.trim() === '') return this.#unclassifiable('empty', base);
    const { idx, val } = p.vectorizer.transform(read);
    if (idx.length === 0) return this.#unclassifiable('no-features', base);
    const z = rawLogits(p, idx, val);
    const scores: ModeProbability[] = p.modes.map((mode, m) => {
      const cal = p.calibration[m]!;
      return { mode, probability: sigmoid(cal.a * z[m]! + cal.b) };
    });
    const chosen = decide(
      scores.map((s) => s.probability),
      p.validation.decision,
    );
    const confidence = calibrateConfidence(topMargin(scores.map((s) => s.probability)), p.validation.confidenceCalibration);
    const labels = scores.filter((_, m) => chosen[m]).sort((x, y) => y.probability - x.probability);
    scores.sort((x, y) => y.probability - x.probability);
    return {
      labels,
      scores,
      confidence,
      escalate: confidence < p.escalationThreshold,
      ...base,
    };
  }

  #unclassifiable(reason: 'empty' | 'no-features', base: Pick<Classification, 'truncated' | 'modelVersion' | 'taxonomyVersion'>): Classification {
    return {
      labels: [],
      scores: this.#p.modes.map((mode) => ({ mode, probability: 0 })),
      confidence: 0,
      escalate: false,
      unclassifiable: reason,
      ...base,
    };
  }

  toJSON(): SerializedLocalClassifier {
    const p = this.#p;
    const v = p.vectorizer.state();
    return {
      format: SERIALIZED_FORMAT,
      formatVersion: 1,
      modelVersion: p.modelVersion,
      trainedAt: p.trainedAt,
      taxonomyVersion: p.taxonomyVersion,
      modes: [...p.modes],
      options: { ...p.options },
      vectorizer: {
        wordVocab: v.wordVocab,
        wordIdf: encodeFloat32(v.wordIdf),
        charVocab: v.charVocab,
        charIdf: encodeFloat32(v.charIdf),
      },
      weights: encodeFloat32(p.weights),
      bias: [...p.bias],
      calibration: p.calibration.map((c) => ({ a: c.a, b: c.b })),
      escalationThreshold: p.escalationThreshold,
      validation: structuredClone(p.validation),
      training: structuredClone(p.training),
    };
  }
}

/**
 * Rebuilds a classifier from `toJSON()` output (e.g. a blob the pipeline stored).
 * @throws ValidationError when the value is not a serialised classifier of this format.
 */
export function loadLocalClassifier(value: unknown): LocalClassifier {
  const r = SerializedSchema.safeParse(value);
  if (!r.success) {
    throw new ValidationError(
      'not a serialised local classifier',
      r.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
    );
  }
  const s = r.data;
  const state: TfidfState = {
    wordVocab: s.vectorizer.wordVocab,
    wordIdf: decodeFloat32(s.vectorizer.wordIdf),
    charVocab: s.vectorizer.charVocab,
    charIdf: decodeFloat32(s.vectorizer.charIdf),
  };
  const vectorizer = restoreTfidf(state);
  const weights = decodeFloat32(s.weights);
  const k = s.modes.length;
  if (weights.length !== k * vectorizer.features || s.bias.length !== k || s.calibration.length !== k) {
    throw new ValidationError('serialised local classifier is inconsistent', [
      { path: 'weights', message: `expected ${k} × ${vectorizer.features} weights, ${k} biases and ${k} calibrations` },
    ]);
  }
  return new TrainedLocalClassifier({
    modelVersion: s.modelVersion,
    trainedAt: s.trainedAt,
    taxonomyVersion: s.taxonomyVersion,
    modes: s.modes,
    options: s.options,
    vectorizer,
    weights,
    bias: s.bias,
    calibration: s.calibration,
    escalationThreshold: s.escalationThreshold,
    validation: s.validation,
    training: s.training,
  });
}

const SOURCE_RANK = { seed: 0, judge: 1, human: 2 } as const;

/**
 * Merges labelled sets by id: a human label overrides a judge label, which overrides a seed label; between two of the
 * same source, the later argument wins. Order of first appearance is kept.
 *
 * @example
 * const examples = mergeLabels(seedExamples, judgeLabels, humanLabels);
 */
export function mergeLabels(...sets: LabelledExample[][]): LabelledExample[] {
  const byId = new Map<string, LabelledExample>();
  for (const set of sets) {
    for (const e of set) {
      const prev = byId.get(e.id);
      if (!prev || SOURCE_RANK[e.labelSource ?? 'seed'] >= SOURCE_RANK[prev.labelSource ?? 'seed']) byId.set(e.id, e);
    }
  }
  return [...byId.values()];
}

/** Maps example labels onto the taxonomy's live modes (retired → merged-into, unknown → dropped). */
function resolveLabels(examples: LabelledExample[], taxonomy: Taxonomy): { text: string; modes: Set<string>; weight: number; e: LabelledExample }[] {
  return examples.map((e) => {
    const modes = new Set<string>();
    for (const id of e.modes) {
      const r = resolveMode(taxonomy, id);
      if (r !== undefined) modes.add(r);
    }
    // A signal that had labels, all of them now unknown, was still a failure: keep it as "other".
    if (modes.size === 0 && e.modes.length > 0) modes.add(OTHER_MODE);
    return { text: e.text, modes, weight: e.weight ?? 1, e };
  });
}

/** A deterministic fold in [0, folds) from the example id, so folds do not move as examples are added. */
function foldOf(id: string, folds: number): number {
  const h = createHash('sha256').update(id).digest();
  return h.readUInt32BE(0) % folds;
}

interface FitResult {
  vectorizer: TfidfVectorizer;
  weights: Float32Array;
  bias: number[];
}

function fitOnce(
  rows: { text: string; modes: Set<string>; weight: number }[],
  modes: string[],
  opts: Required<Omit<TrainOptions, 'now'>>,
): FitResult {
  const vectorizer = fitTfidf(
    rows.map((r) => r.text.slice(0, opts.maxChars)),
    { minDf: opts.minDf },
  );
  const vecs = rows.map((r) => vectorizer.transform(r.text.slice(0, opts.maxChars)));
  const x: SparseRows = { rows: vecs.map((v) => v.idx), values: vecs.map((v) => v.val), features: vectorizer.features };
  const f = vectorizer.features;
  const weights = new Float32Array(modes.length * f);
  const bias: number[] = [];
  modes.forEach((mode, m) => {
    const y = rows.map((r) => (r.modes.has(mode) ? 1 : 0));
    const fit = fitLogisticRegression(x, y, { c: opts.c, sampleWeights: rows.map((r) => r.weight), balanced: true });
    weights.set(Float32Array.from(fit.weights), m * f);
    bias.push(Math.fround(fit.bias));
  });
  return { vectorizer, weights, bias };
}

/**
 * Trains a classifier for the taxonomy's live modes.
 *
 * @example
 * const model = trainLocalClassifier(mergeLabels(seed, humanLabels), await loadTaxonomy(ports.records));
 * await ports.blobs.put(`modes/classifier/${model.modelVersion}.json`, JSON.stringify(model));
 * @throws TrainingDataError with fewer than 10 usable examples.
 */
export function trainLocalClassifier(examples: LabelledExample[], taxonomy: Taxonomy, options: TrainOptions = {}): LocalClassifier {
  const opts = {
    c: options.c ?? DEFAULTS.c,
    folds: options.folds ?? DEFAULTS.folds,
    targetAccuracy: options.targetAccuracy ?? DEFAULTS.targetAccuracy,
    maxChars: options.maxChars ?? DEFAULTS.maxChars,
    minDf: options.minDf ?? DEFAULTS.minDf,
  };
  if (!(opts.c > 0) || !Number.isInteger(opts.folds) || opts.folds < 2 || !(opts.targetAccuracy > 0 && opts.targetAccuracy <= 1)) {
    throw new ValidationError('invalid training options', [{ path: 'options', message: 'c > 0, folds ≥ 2 (integer), 0 < targetAccuracy ≤ 1' }]);
  }
  const usable = examples.filter((e) => typeof e.text === 'string' && e.text.trim() !== '' && (e.weight ?? 1) > 0);
  if (usable.length < MIN_EXAMPLES) throw new TrainingDataError(`need at least ${MIN_EXAMPLES} labelled examples with text, got ${usable.length}`);
  const modes = modeIds(taxonomy);
  const rows = resolveLabels(usable, taxonomy);

  // Out-of-fold raw logits: the validation set for calibration and the escalation threshold.
  const oof: Float64Array[] = rows.map(() => new Float64Array(modes.length));
  const foldIds = rows.map((r) => foldOf(r.e.id, opts.folds));
  for (let fold = 0; fold < opts.folds; fold++) {
    const trainRows = rows.filter((_, i) => foldIds[i] !== fold);
    const testIdx = rows.map((_, i) => i).filter((i) => foldIds[i] === fold);
    if (testIdx.length === 0 || trainRows.length === 0) continue;
    const fit = fitOnce(trainRows, modes, opts);
    for (const i of testIdx) {
      const { idx, val } = fit.vectorizer.transform(rows[i]!.text.slice(0, opts.maxChars));
      oof[i] = rawLogits({ ...fit, modes }, idx, val);
    }
  }
  const calibration = modes.map((mode, m) =>
    fitPlatt(
      oof.map((z) => z[m]!),
      rows.map((r) => (r.modes.has(mode) ? 1 : 0)),
    ),
  );
  const oofProbs = oof.map((z) => modes.map((_, m) => sigmoid(calibration[m]!.a * z[m]! + calibration[m]!.b)));
  const truth = rows.map((r) => modes.map((mode) => r.modes.has(mode)));
  const rule = chooseDecisionRule(oofProbs, truth);
  const decision: DecisionRule = { topFloor: rule.topFloor, extraThreshold: rule.extraThreshold };
  let exact = 0;
  const rawPoints = oofProbs.map((ps, i) => {
    const chosen = decide(ps, decision);
    const correct = chosen.every((c, m) => c === truth[i]![m]);
    if (correct) exact++;
    return { raw: topMargin(ps), correct };
  });
  const confidenceCalibration = fitPlatt(
    rawPoints.map((x) => x.raw),
    rawPoints.map((x) => (x.correct ? 1 : 0)),
  );
  const points = rawPoints.map((x) => ({ confidence: calibrateConfidence(x.raw, confidenceCalibration), correct: x.correct }));
  const escalation = chooseEscalationThreshold(points, opts.targetAccuracy);
  const escalationCurve = [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9].map((t) => chooseEscalationThreshold(points, t));
  const validation: ValidationSummary = {
    folds: opts.folds,
    examples: rows.length,
    microF1: rule.microF1,
    decision,
    confidenceCalibration,
    exactMatch: exact / rows.length,
    escalation,
    escalationCurve,
  };

  const final = fitOnce(rows, modes, opts);
  const positives: Record<string, number> = Object.fromEntries(modes.map((m) => [m, rows.filter((r) => r.modes.has(m)).length]));
  const labelSources: Record<string, number> = {};
  for (const r of rows) labelSources[r.e.labelSource ?? 'seed'] = (labelSources[r.e.labelSource ?? 'seed'] ?? 0) + 1;
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ taxonomy: taxonomy.version, modes, opts }));
  for (const r of rows) hash.update(`\u0000${r.e.id}\u0001${r.text}\u0001${[...r.modes].sort().join(',')}\u0001${r.weight}`);
  return new TrainedLocalClassifier({
    modelVersion: `tfidf-lr-t${taxonomy.version}-${hash.digest('hex').slice(0, 12)}`,
    trainedAt: (options.now ?? new Date()).toISOString(),
    taxonomyVersion: taxonomy.version,
    modes,
    options: opts,
    vectorizer: final.vectorizer,
    weights: final.weights,
    bias: final.bias,
    calibration,
    escalationThreshold: escalation.threshold,
    validation,
    training: { examples: rows.length, positives, labelSources },
  });
}
