/**
 * The local job definitions: which entry point a job definition name runs (`rollout` →
 * `node batch-images/rollout/entrypoint.ts`), the local counterpart of a Batch job definition's image and command.
 *
 * @example
 * const jobs = new LocalJobs({ dataDir, definitions: localJobDefinitionsFromEnv() });
 */
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ValidationError } from '../../../errors.ts';

/** How a job definition runs locally. */
export interface LocalJobDefinition {
  /** argv of the entry point; a leading `node` is this process's Node (24). The job's `command` is appended. */
  command: string[];
  /** Working directory; default the checkout's root. */
  cwd?: string;
  /** Laid over the runtime's environment, under the job's own `environment`. */
  environment?: Record<string, string>;
}

/** The checkout's root (entry points are relative to it). */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** The entry points the local runtime knows; `FLYWHEEL_LOCAL_JOB_DEFINITIONS` (JSON) adds or replaces some. */
export const DEFAULT_LOCAL_JOB_DEFINITIONS: Record<string, LocalJobDefinition> = {
  // No GPU assumed: a vLLM-served checkpoint is served by the trainer's server unless FLYWHEEL_VLLM_COMMAND names
  // a real vLLM (batch-images/rollout/vllm-sidecar.ts, VLLM_STAND_IN_ENV).
  rollout: { command: ['node', 'batch-images/rollout/entrypoint.ts'], environment: { FLYWHEEL_VLLM_STAND_IN: 'trainer' } },
};

const VARIABLE = 'FLYWHEEL_LOCAL_JOB_DEFINITIONS';

const definitionsSchema = z.record(z.string(), z.unknown());
const definitionSchema = z.object({
  command: z.array(z.string()).min(1),
  cwd: z.string().optional(),
  environment: z.record(z.string(), z.string()).optional(),
});

/**
 * `DEFAULT_LOCAL_JOB_DEFINITIONS` with `FLYWHEEL_LOCAL_JOB_DEFINITIONS` laid over it, a JSON object of
 * `{ "<name>": { "command": ["node", "x.ts"], "cwd"?: "...", "environment"?: {...} } }`.
 *
 * @example
 * localJobDefinitionsFromEnv({ FLYWHEEL_LOCAL_JOB_DEFINITIONS: '{"echo":{"command":["node","echo.ts"]}}' });
 */
export function localJobDefinitionsFromEnv(env: Record<string, string | undefined> = process.env): Record<string, LocalJobDefinition> {
  const text = env[VARIABLE];
  if (!text) return { ...DEFAULT_LOCAL_JOB_DEFINITIONS };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ValidationError(`${VARIABLE} is not JSON: ${error instanceof Error ? error.message : String(error)}`, [{ path: VARIABLE, message: 'JSON object' }]);
  }
  const definitions = definitionsSchema.safeParse(parsed);
  if (!definitions.success) throw new ValidationError(`${VARIABLE} must be a JSON object of definitions`, [{ path: VARIABLE, message: 'JSON object' }]);
  const out: Record<string, LocalJobDefinition> = { ...DEFAULT_LOCAL_JOB_DEFINITIONS };
  for (const [name, value] of Object.entries(definitions.data)) {
    const definition = definitionSchema.safeParse(value);
    if (!definition.success) {
      const field = definition.error.issues[0]?.path[0] ?? 'command';
      if (field === 'command') throw new ValidationError(`${VARIABLE}.${name}.command must be a non-empty array of strings`, [{ path: `${VARIABLE}.${name}.command`, message: 'array of strings' }]);
      throw new ValidationError(`${VARIABLE}.${name}.${String(field)} must be ${field === 'cwd' ? 'a string' : 'an object of strings'}`, [{ path: `${VARIABLE}.${name}.${String(field)}`, message: 'wrong type' }]);
    }
    out[name] = definition.data;
  }
  return out;
}
