import type { ChatRequest, ChatResponse, EmbedResponse, ModelsPort } from '../ports/models.ts';
import { ModelUnavailableError } from './model-errors.ts';

/**
 * Wraps a model so the number of calls in flight adapts to the endpoint's rate limits (AIMD, as TCP and the AWS
 * SDK's adaptive retry do): each call that met a 429 halves the window, each clean call widens it by 1/window.
 * Every attempt of an eval shares one wrapper per endpoint, so a sweep slows down instead of hammering a throttled
 * endpoint into `Flywheel.ModelUnavailable`.
 *
 * @example
 * const shared = adaptiveConcurrency(openAiCompatibleModel({ baseUrl, model }), { initial: 8, max: 32 });
 * await Promise.all(tasks.map((t) => runAgent({ ...input, model: shared })));
 */
export interface AdaptiveConcurrencyOptions {
  initial?: number;
  min?: number;
  max?: number;
}

export interface AdaptiveModel extends ModelsPort {
  /** The current window (calls allowed in flight). */
  limit(): number;
  inFlight(): number;
}

export function adaptiveConcurrency(model: ModelsPort, options: AdaptiveConcurrencyOptions = {}): AdaptiveModel {
  const min = options.min ?? 1;
  const max = options.max ?? 64;
  let window = Math.min(max, Math.max(min, options.initial ?? 4));
  let running = 0;
  const waiters: Array<() => void> = [];

  const release = () => {
    running--;
    while (waiters.length > 0 && running < Math.floor(window)) {
      running++;
      waiters.shift()!();
    }
  };
  const acquire = () =>
    new Promise<void>((resolve) => {
      if (running < Math.floor(window)) {
        running++;
        resolve();
      } else waiters.push(resolve);
    });

  return {
    id: model.id,
    limit: () => Math.floor(window),
    inFlight: () => running,
    async chat(request: ChatRequest): Promise<ChatResponse> {
      await acquire();
      try {
        const response = await model.chat(request);
        if ((response.rateLimited ?? 0) > 0) window = Math.max(min, window / 2);
        else window = Math.min(max, window + 1 / window);
        return response;
      } catch (error) {
        if (error instanceof ModelUnavailableError && error.lastStatus === 429) window = Math.max(min, window / 2);
        throw error;
      } finally {
        release();
      }
    },
    embed(texts: string[]): Promise<EmbedResponse> {
      return model.embed(texts);
    },
  };
}
