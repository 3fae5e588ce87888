/**
 * Hash routing over the page table: `#/feedback/e-17?rating=down` → the entry whose path is `/feedback/:id`, with
 * `{ id: 'e-17' }` and the query. The hash keeps the console one HTML page that any static host or the API serves.
 *
 * @example
 * const route = parseHash('#/attempts/a-1?tab=diff');
 * const match = matchPage(pages, route.path); // { entry, params: { id: 'a-1' } }
 */
import type { PageEntry } from './page.ts';

export interface HashRoute {
  path: string;
  query: URLSearchParams;
}

/** `#/a/b?x=1` → `{ path: '/a/b', query }`; an empty hash is `/`. */
export function parseHash(hash: string): HashRoute {
  const raw = hash.replace(/^#/, '');
  const at = raw.indexOf('?');
  const path = (at >= 0 ? raw.slice(0, at) : raw) || '/';
  return { path: path.startsWith('/') ? path : `/${path}`, query: new URLSearchParams(at >= 0 ? raw.slice(at + 1) : '') };
}

/** The first entry whose path matches (literal segments equal, `:name` segments captured and decoded). */
export function matchPage(pages: readonly PageEntry[], path: string): { entry: PageEntry; params: Record<string, string> } | undefined {
  const parts = path.split('/').filter((p, i) => i === 0 || p !== '');
  for (const entry of pages) {
    const want = entry.path.split('/').filter((p, i) => i === 0 || p !== '');
    if (want.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < want.length && ok; i++) {
      const w = want[i]!;
      const p = parts[i]!;
      if (w.startsWith(':')) {
        try {
          params[w.slice(1)] = decodeURIComponent(p);
        } catch {
          ok = false;
        }
      } else ok = w === p;
    }
    if (ok) return { entry, params };
  }
  return undefined;
}

/** A console path with `:name` segments filled (encoded): `pathTo('/feedback/:id', { id })`. */
export function pathTo(pattern: string, params: Record<string, string>): string {
  return pattern.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}
