/**
 * Cache keys of environment layers: sha256 over the recipe version (bumped whenever what a build does changes),
 * the layer kind, the toolchain it is built with (interpreter version and build, path) and the install plan read from
 * the tree's lockfiles and manifests (never the whole tree: an edit of the code reuses the layer). Same inputs, same
 * key, on any machine with the same toolchain.
 */
import { createHash } from 'node:crypto';

/** Bump when a layer built by an older recipe must not be reused. */
export const ENVIRONMENT_RECIPE_VERSION = 2;

/** Canonical JSON: object keys sorted, so the key does not depend on property order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * `<kind>-<32 hex>` for a layer.
 *
 * @example
 * layerKey('python', { python: '3.11.7 (main, …)', requirements: ['six==1.17.0'] }) // 'python-3f1c…'
 */
export function layerKey(kind: string, inputs: Record<string, unknown>): string {
  const digest = createHash('sha256').update(canonicalJson({ recipe: ENVIRONMENT_RECIPE_VERSION, kind, inputs })).digest('hex');
  return `${kind}-${digest.slice(0, 32)}`;
}

/** The id of a whole environment: its layers' keys and its toolchains. */
export function environmentId(parts: Record<string, unknown>): string {
  return `env-${createHash('sha256').update(canonicalJson({ recipe: ENVIRONMENT_RECIPE_VERSION, ...parts })).digest('hex').slice(0, 32)}`;
}
