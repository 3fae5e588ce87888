/**
 * A distilled judge's reward model, evaluated in TypeScript: the safetensors weights and `metadata.json` the trainer
 * image writes (`batch-images/trainer/flywheel_trainer/reward_model.py`), and the same hashed n-gram features
 * (`features.py`: ASCII tokens, FNV-1a 32, `log1p` counts, unit length), so scoring a verdict is a few thousand
 * multiply-adds in process, with no Python per verdict. `test/judges/derive-reward-model.test.ts` holds it to the
 * trainer's own `score`.
 *
 * @example
 * const model = parseRewardModel(await blobs.get(`${prefix}/model.safetensors`), await blobs.get(`${prefix}/metadata.json`));
 * model.scores('asked before editing'); // { 'asks-first': 0.93 }
 * model.preferA('asked first', 'guessed'); // pairwise: 0.88
 */
import { z } from 'zod';
import { ValidationError } from '../../errors.ts';

export const REWARD_MODEL_FORMAT = 'flywheel-reward-model/1';
export const REWARD_MODEL_WEIGHTS = 'model.safetensors';
export const REWARD_MODEL_METADATA = 'metadata.json';

export const RewardModelMetadataSchema = z.looseObject({
  format: z.literal(REWARD_MODEL_FORMAT),
  kind: z.enum(['pointwise', 'pairwise']),
  labels: z.array(z.string()).min(1),
  encoder: z.looseObject({ type: z.literal('hashed-ngrams'), dim: z.number().int().positive(), hash: z.literal('fnv1a32') }),
  hidden: z.number().int().positive(),
  seed: z.number().int(),
  examples: z.number().int().nonnegative(),
  loss: z.object({ first: z.number(), last: z.number() }),
  sha256: z.string().optional(),
});
export type RewardModelMetadata = z.infer<typeof RewardModelMetadataSchema>;

const MAX_TOKENS = 4096;
const TOKEN = /[a-z0-9]+/g;

/** FNV-1a 32 over the UTF-8 bytes of `text` (the features are ASCII). */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** The feature vector of a text, as `features.featurize` computes it. */
export function featurize(text: string, dim: number): Float64Array {
  const tokens = (text.toLowerCase().match(TOKEN) ?? []).slice(0, MAX_TOKENS);
  const names: string[] = tokens.map((t) => `w:${t}`);
  for (let i = 0; i + 1 < tokens.length; i++) names.push(`b:${tokens[i]} ${tokens[i + 1]}`);
  for (const t of tokens) {
    const padded = `^${t}$`;
    for (let i = 0; i + 3 <= padded.length; i++) names.push(`c:${padded.slice(i, i + 3)}`);
  }
  const counts = new Map<number, number>();
  for (const name of names) {
    const bucket = fnv1a32(name) % dim;
    counts.set(bucket, (counts.get(bucket) ?? 0) + 1);
  }
  const vec = new Float64Array(dim);
  let norm = 0;
  for (const [bucket, count] of counts) {
    vec[bucket] = Math.log1p(count);
    norm += vec[bucket]! * vec[bucket]!;
  }
  if (norm > 0) {
    const n = Math.sqrt(norm);
    for (const [bucket] of counts) vec[bucket]! /= n;
  }
  return vec;
}

interface Tensor {
  shape: number[];
  data: Float32Array;
}

/** Reads a safetensors file of float32 tensors (8-byte little-endian header length, JSON header, raw data). */
export function readSafetensors(bytes: Uint8Array): Record<string, Tensor> {
  const fail = (message: string) => new ValidationError(`Invalid reward model weights: ${message}`, [{ path: REWARD_MODEL_WEIGHTS, message }]);
  if (bytes.byteLength < 8) throw fail('shorter than its header');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (8 + headerLength > bytes.byteLength) throw fail('header longer than the file');
  const header = JSON.parse(Buffer.from(bytes.subarray(8, 8 + headerLength)).toString('utf8')) as Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  const base = 8 + headerLength;
  const out: Record<string, Tensor> = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (t.dtype !== 'F32') throw fail(`${name} is ${t.dtype}, want F32`);
    const [start, end] = t.data_offsets;
    if (!(start >= 0 && end >= start && base + end <= bytes.byteLength && (end - start) % 4 === 0)) throw fail(`${name}: data offsets outside the file`);
    // A copy: the data may sit at an offset a Float32Array cannot view (and a Buffer's slice would not copy).
    const copy = new Uint8Array(end - start);
    copy.set(bytes.subarray(base + start, base + end));
    out[name] = { shape: t.shape, data: new Float32Array(copy.buffer) };
  }
  return out;
}

export interface RewardModel {
  metadata: RewardModelMetadata;
  /** Pointwise: the probability of each label; pairwise: the raw score under `preference`. */
  scores(text: string): Record<string, number>;
  /** Pairwise: the probability that `a` is better than `b`. */
  preferA(a: string, b: string): number;
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/**
 * A reward model from the trainer's two files; throws `Flywheel.ValidationError` for weights or metadata of another
 * shape.
 */
export function parseRewardModel(weights: Uint8Array, metadataBytes: Uint8Array | string): RewardModel {
  const parsed = RewardModelMetadataSchema.safeParse(JSON.parse(typeof metadataBytes === 'string' ? metadataBytes : Buffer.from(metadataBytes).toString('utf8')));
  if (!parsed.success) throw new ValidationError('Invalid reward model metadata', parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })));
  const metadata = parsed.data;
  const t = readSafetensors(weights);
  const dim = metadata.encoder.dim;
  const hidden = metadata.hidden;
  const heads = metadata.labels.length;
  const need = (name: string, size: number) => {
    const tensor = t[name];
    if (!tensor || tensor.data.length !== size) throw new ValidationError(`Invalid reward model weights: ${name}`, [{ path: name, message: `want ${size} floats` }]);
    return tensor.data;
  };
  const w1 = need('hidden.weight', hidden * dim); // [hidden, dim]
  const b1 = need('hidden.bias', hidden);
  const w2 = need('out.weight', heads * hidden); // [heads, hidden]
  const b2 = need('out.bias', heads);
  const logits = (text: string): number[] => {
    const x = featurize(text, dim);
    const nonzero: number[] = [];
    for (let i = 0; i < dim; i++) if (x[i] !== 0) nonzero.push(i);
    const h = new Float64Array(hidden);
    for (let j = 0; j < hidden; j++) {
      let s = b1[j]!;
      const row = j * dim;
      for (const i of nonzero) s += w1[row + i]! * x[i]!;
      h[j] = Math.tanh(s);
    }
    const out: number[] = [];
    for (let k = 0; k < heads; k++) {
      let s = b2[k]!;
      for (let j = 0; j < hidden; j++) s += w2[k * hidden + j]! * h[j]!;
      out.push(s);
    }
    return out;
  };
  return {
    metadata,
    scores(text) {
      const l = logits(text);
      return Object.fromEntries(metadata.labels.map((label, k) => [label, metadata.kind === 'pointwise' ? sigmoid(l[k]!) : l[k]!]));
    },
    preferA(a, b) {
      return sigmoid(logits(a)[0]! - logits(b)[0]!);
    },
  };
}
