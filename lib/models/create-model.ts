import type { ModelsPort } from '../ports/models.ts';
import { ValidationError } from '../errors.ts';
import { bedrockConverseModel } from '../drivers/aws/bedrock-converse.ts';
import { openAiCompatibleModel } from './openai-compatible.ts';

/**
 * Builds a model from a one-line spec, as the CLI's `--model` and the rollout job's settings give it:
 * - `openai:<model>@<baseUrl>`  e.g. `openai:qwen3-coder@http://127.0.0.1:8000/v1` (vLLM, SGLang, Ollama, hosted)
 * - `bedrock:<modelId>`          e.g. `bedrock:anthropic.claude-sonnet-4-5-v1:0` (region from AWS_REGION)
 * The API key of an OpenAI-compatible endpoint comes from `apiKey` or `OPENAI_API_KEY`.
 *
 * @example
 * const model = createModel(process.env.FLYWHEEL_MODEL ?? 'openai:qwen3-coder@http://127.0.0.1:8000/v1');
 */
export function createModel(spec: string, options: { apiKey?: string; region?: string; env?: NodeJS.ProcessEnv } = {}): ModelsPort {
  const env = options.env ?? process.env;
  const colon = spec.indexOf(':');
  const kind = colon < 0 ? '' : spec.slice(0, colon);
  const rest = colon < 0 ? '' : spec.slice(colon + 1);
  if (kind === 'openai') {
    const at = rest.indexOf('@');
    if (at <= 0 || !/^https?:\/\//.test(rest.slice(at + 1))) throw new ValidationError(`model spec "${spec}": want openai:<model>@<http(s) base URL>`, [{ path: 'model', message: 'openai:<model>@<baseUrl>' }]);
    const apiKey = options.apiKey ?? env['OPENAI_API_KEY'];
    return openAiCompatibleModel({ model: rest.slice(0, at), baseUrl: rest.slice(at + 1), ...(apiKey ? { apiKey } : {}) });
  }
  if (kind === 'bedrock' && rest !== '') {
    const region = options.region ?? env['AWS_REGION'];
    return bedrockConverseModel({ modelId: rest, ...(region ? { region } : {}) });
  }
  throw new ValidationError(`model spec "${spec}": want openai:<model>@<baseUrl> or bedrock:<modelId>`, [{ path: 'model', message: 'unknown model kind' }]);
}
