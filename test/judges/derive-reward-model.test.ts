/**
 * The distilled judge is scored in TypeScript from the trainer's files: the same features (FNV-1a over the same
 * n-grams) and the same network as `python3 -m flywheel_trainer score`, checked here against the trainer itself run
 * as a process, pointwise and pairwise.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPOSITORY_ROOT } from '../../lib/drivers/local/jobs/job-definitions.ts';
import { ErrorNames } from '../../lib/errors.ts';
import { featurize, fnv1a32, parseRewardModel } from '../../lib/judges/derive/reward-model.ts';
import { targetOf, valueOf, verdictCost, DEFAULT_DERIVE_SETTINGS } from '../../lib/judges/derive/judge-runners.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const tempDir = tempDirs('flywheel-reward-model-');
const TRAINER = join(REPOSITORY_ROOT, 'batch-images', 'trainer');
const python = (args: string[]) => execFileSync(process.env.FLYWHEEL_PYTHON || 'python3', ['-m', 'flywheel_trainer', ...args], { cwd: TRAINER, encoding: 'utf8', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

const GOOD = ['asked which file before editing', 'ran the tests and said so', 'kept the change small'];
const BAD = ['rewrote everything unasked 🎉', 'deleted the failing test', 'ignored AGENTS.md entirely'];
const TEXTS = ['asked which file first', 'deleted the test', 'Ünïcödé and emoji 🎉 mixed-in text_42', ''];

function load(dir: string) {
  return parseRewardModel(readFileSync(join(dir, 'model.safetensors')), readFileSync(join(dir, 'metadata.json'), 'utf8'));
}

describe('reward model in TypeScript', () => {
  it('hashes as the trainer documents', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    const v = featurize('Hello, hello world', 64);
    expect(v.reduce((a, x) => a + x * x, 0)).toBeCloseTo(1, 12);
    expect([...featurize('', 8)]).toEqual(new Array(8).fill(0));
  });

  it('scores pointwise exactly as the Python trainer does', () => {
    const dir = tempDir();
    const rows = Array.from({ length: 24 }, (_, i) => ({ text: `${(i % 2 ? BAD : GOOD)[i % 3]} ${i}`, targets: { 'asks-first': i % 2 ? 0 : 1, 'mode:x': i % 3 === 0 ? 1 : 0 } }));
    writeFileSync(join(dir, 'data.jsonl'), jsonl(rows));
    python(['train', '--data', join(dir, 'data.jsonl'), '--out', join(dir, 'm'), '--epochs', '60']);
    writeFileSync(join(dir, 'items.jsonl'), jsonl(TEXTS.map((text, i) => ({ id: String(i), text }))));
    const expected = python(['score', '--model', join(dir, 'm'), '--input', join(dir, 'items.jsonl')]).trim().split('\n').map((l) => JSON.parse(l).scores as Record<string, number>);
    const model = load(join(dir, 'm'));
    expect(model.metadata.labels).toEqual(['asks-first', 'mode:x']);
    TEXTS.forEach((text, i) => {
      const got = model.scores(text);
      for (const [label, p] of Object.entries(expected[i]!)) expect(got[label]).toBeCloseTo(p, 5);
    });
  }, 60_000);

  it('scores pairs exactly as the Python trainer does (Bradley–Terry)', () => {
    const dir = tempDir();
    const rows = Array.from({ length: 20 }, (_, i) => (i % 2 ? { a: BAD[i % 3], b: GOOD[i % 3], target: 0 } : { a: GOOD[i % 3], b: BAD[i % 3], target: 1 }));
    writeFileSync(join(dir, 'data.jsonl'), jsonl(rows));
    python(['train', '--data', join(dir, 'data.jsonl'), '--out', join(dir, 'm'), '--kind', 'pairwise', '--epochs', '60']);
    const pairs = [{ id: '0', a: GOOD[0], b: BAD[0] }, { id: '1', a: BAD[1], b: GOOD[2] }];
    writeFileSync(join(dir, 'items.jsonl'), jsonl(pairs));
    const expected = python(['score', '--model', join(dir, 'm'), '--input', join(dir, 'items.jsonl')]).trim().split('\n').map((l) => JSON.parse(l).preferA as number);
    const model = load(join(dir, 'm'));
    pairs.forEach((p, i) => expect(model.preferA(p.a!, p.b!)).toBeCloseTo(expected[i]!, 5));
    expect(model.preferA(GOOD[0]!, BAD[0]!)).toBeGreaterThan(0.5);
  }, 60_000);

  it('refuses weights or metadata of another shape, naming the field', () => {
    expect(() => parseRewardModel(new Uint8Array(4), '{}')).toThrow(expect.objectContaining({ name: ErrorNames.validation }));
    const meta = { format: 'flywheel-reward-model/1', kind: 'pointwise', labels: ['a'], encoder: { type: 'hashed-ngrams', dim: 8, hash: 'fnv1a32' }, hidden: 2, seed: 0, examples: 1, loss: { first: 1, last: 0 } };
    const header = Buffer.from(JSON.stringify({ 'hidden.weight': { dtype: 'F32', shape: [2, 8], data_offsets: [0, 64] } }));
    const bytes = Buffer.concat([Buffer.alloc(8), header, Buffer.alloc(64)]);
    bytes.writeBigUInt64LE(BigInt(header.length), 0);
    expect(() => parseRewardModel(bytes, JSON.stringify(meta))).toThrow(/hidden\.bias/);
  });

  it('maps labels to targets and back, and prices verdicts', () => {
    expect([targetOf('c1', 'pass'), targetOf('c1', 'fail'), targetOf('c1', 'not-applicable'), targetOf('mode:x', 'yes'), targetOf('preference', 'tie')]).toEqual([1, 0, undefined, 1, 0.5]);
    expect([valueOf('c1', 0.7), valueOf('mode:x', 0.2), valueOf('preference', 0.9)]).toEqual(['pass', 'no', 'a']);
    const settings = { ...DEFAULT_DERIVE_SETTINGS, pricing: [{ prefix: 'openai:', usdPerSecond: 0.001 }, { prefix: 'openai:big@', usdPerVerdict: 0.01 }] };
    expect(verdictCost(settings, 'openai:big@http://x/v1', 500)).toBe(0.01);
    expect(verdictCost(settings, 'openai:small@http://x/v1', 500)).toBeCloseTo(0.0005, 12);
    expect(verdictCost(settings, 'bedrock:claude', 500)).toBeUndefined();
    expect(verdictCost(settings, 'reward-model:judges/x/model', 1000)).toBeCloseTo(settings.rewardModelUsdPerSecond, 12);
  });
});
