/**
 * Which models the failure-mode parts use, from the environment, in `createModel`'s spec syntax
 * (`openai:<model>@<baseUrl>` | `bedrock:<modelId>`):
 * - `FLYWHEEL_JUDGE_MODEL`: the LLM judge of unsure signals, and the drafter of eval cases;
 * - `FLYWHEEL_EMBEDDING_MODEL`: comment embeddings for clustering (`/embeddings`, Bedrock Titan).
 * Either may be unset: the local classifier still labels, and what needs a model says so (`ModelNotConfiguredError`).
 */
import { FlywheelError } from '../errors.ts';
import { createModel } from '../models/create-model.ts';
import { ModesErrorNames } from './modes-errors.ts';
import type { ModelsPort } from '../ports/models.ts';

export interface ModesModels {
  judge?: ModelsPort;
  embedder?: ModelsPort;
}

export const JUDGE_MODEL_ENV = 'FLYWHEEL_JUDGE_MODEL';
export const EMBEDDING_MODEL_ENV = 'FLYWHEEL_EMBEDDING_MODEL';

/** A feature that needs a model was asked for while none is configured (HTTP 503 with the variable to set). */
export class ModelNotConfiguredError extends FlywheelError {
  readonly variable: string;
  constructor(what: string, variable: string) {
    super(ModesErrorNames.modelNotConfigured, `${what} needs a model: set ${variable} (openai:<model>@<baseUrl> or bedrock:<modelId>)`);
    this.variable = variable;
  }
}

/** The models named by the environment (unset or empty: absent). */
export function modesModelsFromEnv(env: NodeJS.ProcessEnv = process.env): ModesModels {
  const judge = env[JUDGE_MODEL_ENV]?.trim();
  const embedding = env[EMBEDDING_MODEL_ENV]?.trim();
  return {
    ...(judge ? { judge: createModel(judge, { env }) } : {}),
    ...(embedding ? { embedder: createModel(embedding, { env }) } : {}),
  };
}

/** Bedrock model ids named by specs (for IAM grants in CDK). */
export function bedrockModelIds(...specs: (string | undefined)[]): string[] {
  return specs.filter((s): s is string => !!s && s.startsWith('bedrock:')).map((s) => s.slice('bedrock:'.length));
}
