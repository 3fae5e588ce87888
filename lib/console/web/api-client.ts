/**
 * The console's one way to the API: same origin, the person's API key in `x-api-key` (kept in sessionStorage by the
 * sign-in page), JSON in and out. A failed call throws `ConsoleApiError` with the API's error name and message, so a
 * page can say "needs the admin scope" instead of "failed".
 *
 * @example
 * const api = createConsoleApi({ apiKey: 'fw_…' });
 * const { suites } = await api.get<{ suites: Suite[] }>('/v1/suites', { limit: 50 });
 */
export const ConsoleErrorNames = { api: 'ConsoleApiError' } as const;

export class ConsoleApiError extends Error {
  override readonly name = ConsoleErrorNames.api;
  readonly status: number;
  /** The API's error name, e.g. `Forbidden`, `ValidationError`, `NotFound`. */
  readonly error: string;
  constructor(status: number, error: string, message: string) {
    super(message);
    this.status = status;
    this.error = error;
  }
}

export type QueryValue = string | number | boolean | undefined;

export interface ConsoleApi {
  get<T>(path: string, query?: Record<string, QueryValue>): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  /** The URL of a binary resource (a PNG chart) with the key as a header is not possible in <img>: fetch it as a blob URL. */
  blobUrl(path: string, query?: Record<string, QueryValue>): Promise<string>;
}

export interface ConsoleApiOptions {
  apiKey: string;
  /** The API's base URL; default: the page's own directory (the console is served by the API it calls). */
  baseUrl?: string;
  fetch?: typeof fetch;
}

export function createConsoleApi(options: ConsoleApiOptions): ConsoleApi {
  const base = (options.baseUrl ?? new URL('.', globalThis.location.href).href).replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const url = (path: string, query?: Record<string, QueryValue>): string => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') params.set(k, String(v));
    const qs = params.toString();
    return `${base}${path}${qs ? `?${qs}` : ''}`;
  };
  const send = async (method: string, path: string, query?: Record<string, QueryValue>, body?: unknown): Promise<Response> => {
    const res = await doFetch(url(path, query), {
      method,
      headers: { 'x-api-key': options.apiKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) {
      const problem = (await res.json().catch(() => ({}))) as { error?: string; message?: string };
      throw new ConsoleApiError(res.status, problem.error ?? `HTTP ${res.status}`, problem.message ?? res.statusText);
    }
    return res;
  };
  return {
    async get<T>(path: string, query?: Record<string, QueryValue>): Promise<T> {
      return (await (await send('GET', path, query)).json()) as T;
    },
    async post<T>(path: string, body?: unknown): Promise<T> {
      return (await (await send('POST', path, undefined, body ?? {})).json()) as T;
    },
    async blobUrl(path: string, query?: Record<string, QueryValue>): Promise<string> {
      return URL.createObjectURL(await (await send('GET', path, query)).blob());
    },
  };
}
