/**
 * Where the console keeps the person's API key: sessionStorage (gone when the tab closes, never sent anywhere but in
 * the `x-api-key` header of the console's own API calls).
 *
 * @example
 * sessionStorage.setItem(API_KEY_STORAGE, 'fwlocal_…'); // what the sign-in form does
 */
export const API_KEY_STORAGE = 'flywheel.console.apiKey';

/** The key signed in with, or undefined. */
export function readApiKey(storage: Storage = globalThis.sessionStorage): string | undefined {
  const key = storage.getItem(API_KEY_STORAGE);
  return key === null || key.trim() === '' ? undefined : key.trim();
}

/** Keeps the key for this tab. */
export function storeApiKey(key: string, storage: Storage = globalThis.sessionStorage): void {
  storage.setItem(API_KEY_STORAGE, key.trim());
}

/** Forgets the key (sign out, or a 401 from the API). */
export function clearApiKey(storage: Storage = globalThis.sessionStorage): void {
  storage.removeItem(API_KEY_STORAGE);
}
