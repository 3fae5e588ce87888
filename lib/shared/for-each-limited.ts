/**
 * Runs `fn` over `items` with at most `limit` calls in flight (conditional puts have no batch form, and an
 * unbounded fan-out of 500 would only trip the store's throttling). Rejects with the first error `fn` throws.
 *
 * @example
 * await forEachLimited(taskIds, 16, async (id) => { tasks.push(await loadTask(id)); });
 */
export async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
