/**
 * Waiting on a condition, not on time: `waitFor` polls `check` until it returns a value (anything but `undefined`)
 * and fails with a message that names what was awaited (and the last error `check` threw) once `timeoutMs` has
 * passed. The timeout is only an upper bound for a test that would otherwise hang: it is generous on purpose, so a
 * busy machine makes a test slower, never red.
 *
 * @example
 * const record = await waitFor(async () => (await records.get(key)) ?? undefined, { what: `record ${key}` });
 */

/**
 * Upper bounds for tests that start child processes of the CLI or the runtime: each start costs about a second of
 * CPU (TypeScript stripped at load), many wall seconds on a busy machine. Bounds for hangs, never expected durations.
 */
export const RUNTIME_START_TIMEOUT_MS = 50_000;
export const PROCESS_TEST_TIMEOUT_MS = 180_000;

export interface WaitOptions {
  /** What is awaited, for the failure message ("the job to be RUNNING"); a function is read when the wait fails. */
  what: string | (() => string);
  /** Upper bound before failing; default 20 s (under vitest's 30 s test timeout). */
  timeoutMs?: number;
  /** Pause between checks; default 50 ms. */
  everyMs?: number;
  /** An error `check` throws that no later check can cure (the process under test exited): rethrown at once. */
  stopOn?: (error: unknown) => boolean;
}

class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
}

/** Resolves with the first value `check` returns that is not `undefined`; a `check` that throws is retried. */
export async function waitFor<T>(check: () => T | undefined | Promise<T | undefined>, options: WaitOptions): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const everyMs = options.everyMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      if (options.stopOn?.(error)) throw error;
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError === undefined ? '' : `; last error: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
      throw new WaitTimeoutError(`timed out after ${timeoutMs} ms waiting for ${typeof options.what === 'function' ? options.what() : options.what}${cause}`);
    }
    await pause(everyMs);
  }
}

/** A pause between polls; not a way to wait for something to happen (use `waitFor`). */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
