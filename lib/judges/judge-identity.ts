/**
 * What a judge is, exactly: its model, its prompt, its rubric, its decoding parameters, its output schema, the
 * taxonomy version it labels with and, for a derived judge, what it was derived from (checkpoint, teacher). The version is a hash of all of them, so any change is a new version and every
 * verdict that stores `{ name, version }` says precisely which judge gave it.
 *
 * @example
 * const def = parseJudgeDefinition({ name: 'fm-judge', kind: 'failure-mode', model: 'openai:qwen@http://…', prompt, outputSchema });
 * const id = judgeIdentity(def); // { name: 'fm-judge', version: '3f2a9c…', promptHash: '…', … }
 * judgeRefString(id); // 'fm-judge@3f2a9c…'
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ValidationError } from '../errors.ts';
import { canonicalJson } from '../shared/canonical-json.ts';
import { toFieldIssues } from '../shared/field-issues.ts';

/**
 * - `rubric`: scores an attempt on criteria (pass/fail with reason and quoted evidence);
 * - `pairwise`: picks the better of two attempts;
 * - `failure-mode`: labels a signal with modes of the taxonomy (the failure-mode chain's judge);
 * - `reward-model`: a small trained model (a distilled judge) that scores without a prompt.
 */
export const JUDGE_KINDS = ['rubric', 'pairwise', 'failure-mode', 'reward-model'] as const;
export const JudgeKindSchema = z.enum(JUDGE_KINDS);
export type JudgeKind = z.infer<typeof JudgeKindSchema>;

export const JUDGE_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** One rubric criterion: `id` is stable across rewordings within a version; `weight` scales its score. */
export const CriterionSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'lower-case letters, digits, _ and -'),
  criterion: z.string().min(1).max(2000),
  weight: z.number().positive().max(100).default(1),
});
export type Criterion = z.infer<typeof CriterionSchema>;

export const DecodingSchema = z.strictObject({
  temperature: z.number().min(0).max(2).default(0),
  topP: z.number().gt(0).max(1).optional(),
  maxTokens: z.number().int().positive().max(65_536).optional(),
  seed: z.number().int().optional(),
});
export type Decoding = z.infer<typeof DecodingSchema>;

export const JudgeDefinitionSchema = z.strictObject({
  name: z.string().regex(JUDGE_NAME_PATTERN, 'lower-case letters, digits, . _ - (at most 64)'),
  kind: JudgeKindSchema,
  /** The models port's id of the model (`openai:<model>@<baseUrl>`, `bedrock:<modelId>`), or `reward-model:<blob key>`. */
  model: z.string().min(1).max(1024),
  /** The system prompt (empty for a reward model). */
  prompt: z.string().max(64_000).default(''),
  rubric: z.array(CriterionSchema).max(50).default([]),
  decoding: DecodingSchema.default({ temperature: 0 }),
  /** The JSON Schema of the structured answer (the tool's parameters). */
  outputSchema: z.record(z.string(), z.unknown()).default({}),
  /** The failure-mode taxonomy version a `failure-mode` judge labels with. */
  taxonomyVersion: z.number().int().positive().optional(),
  /** Where a derived judge came from: the top checkpoint it was made from, and the judge it was distilled from. */
  derivedFrom: z.strictObject({ checkpoint: z.string().min(1).max(256).optional(), teacher: z.string().min(1).max(200).optional() }).optional(),
  description: z.string().max(2000).optional(),
});
export type JudgeDefinition = z.output<typeof JudgeDefinitionSchema>;
export type JudgeDefinitionInput = z.input<typeof JudgeDefinitionSchema>;

/** Which judge gave a verdict: stored on every verdict. */
export const JudgeRefSchema = z.strictObject({ name: z.string().min(1), version: z.string().min(1) });
export type JudgeRef = z.infer<typeof JudgeRefSchema>;

export interface JudgeIdentity extends JudgeRef {
  kind: JudgeKind;
  model: string;
  promptHash: string;
  rubricHash: string;
  outputSchemaHash: string;
  decoding: Decoding;
  taxonomyVersion?: number;
  /** Where a derived judge came from (part of the version: two checkpoints behind one endpoint are two judges). */
  derivedFrom?: { checkpoint?: string; teacher?: string };
}

/** Hex characters of a judge version. */
export const JUDGE_VERSION_LENGTH = 12;

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The identity (and so the version) of a definition. The name is not part of the version: the same judge is the same. */
export function judgeIdentity(def: JudgeDefinition): JudgeIdentity {
  const promptHash = sha256Hex(def.prompt);
  const rubricHash = sha256Hex(canonicalJson(def.rubric));
  const outputSchemaHash = sha256Hex(canonicalJson(def.outputSchema));
  const hashed = {
    kind: def.kind,
    model: def.model,
    promptHash,
    rubricHash,
    outputSchemaHash,
    decoding: def.decoding,
    ...(def.taxonomyVersion !== undefined ? { taxonomyVersion: def.taxonomyVersion } : {}),
    // A definition without `derivedFrom` hashes as before (its version does not change).
    ...(def.derivedFrom !== undefined && Object.keys(def.derivedFrom).length > 0 ? { derivedFrom: def.derivedFrom } : {}),
  };
  const version = sha256Hex(canonicalJson(hashed)).slice(0, JUDGE_VERSION_LENGTH);
  return { name: def.name, version, ...hashed };
}

/** `name@version`, the form CLIs and reports print. */
export function judgeRefString(ref: JudgeRef): string {
  return `${ref.name}@${ref.version}`;
}

/** Parses `name@version` (or a bare name, version undefined). */
export function parseJudgeRef(text: string): { name: string; version?: string } {
  const at = text.lastIndexOf('@');
  return at < 0 ? { name: text } : { name: text.slice(0, at), version: text.slice(at + 1) };
}

/** Validates a definition; throws `Flywheel.ValidationError` naming every offending field. */
export function parseJudgeDefinition(input: unknown): JudgeDefinition {
  const r = JudgeDefinitionSchema.safeParse(input);
  if (!r.success) throw new ValidationError('Invalid judge definition', toFieldIssues(r.error.issues));
  return r.data;
}
