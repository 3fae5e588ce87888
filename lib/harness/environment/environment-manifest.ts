/**
 * `env.json`: what one environment layer holds, written into the layer's cache entry when it is built and readable
 * by the harness for the attempt record (`CachedSandboxEnvironment.manifests`). Removals are listed: a distribution
 * that provided the package under test (a release of the project pulled in by a dependency) is taken out.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ENTRY_MARKER } from './build-lock.ts';

export const ENVIRONMENT_MANIFEST_VERSION = 1 as const;

export interface InstalledPackage {
  name: string;
  version: string;
}

export interface RemovedPackage extends InstalledPackage {
  /** Where it was, relative to the layer (`lib/python3.11/site-packages/calc`, `node_modules/a/node_modules/calc`). */
  path: string;
  /** Why: it provides the project's name or one of its top-level import packages. */
  reason: string;
}

export interface EnvironmentManifest {
  schemaVersion: typeof ENVIRONMENT_MANIFEST_VERSION;
  kind: 'python' | 'node';
  /** The layer's cache key (`python-<hex>`). */
  key: string;
  recipeVersion: number;
  /** Where the layer is bound inside the sandbox. */
  target: string;
  toolchain: Record<string, unknown>;
  /** Where packages came from (index URLs, registry). */
  packageSource: Record<string, unknown>;
  /** The tree's files the plan was read from. */
  inputs: string[];
  /** What was asked for (requirement specs; for node, the lockfile's name). */
  requested: string[];
  /** Declared requirements that were not installed, with why. */
  skipped: Array<{ line: string; from: string; reason: string }>;
  /** The project's identity: never installed. */
  project: { names: string[]; topLevel: string[] };
  installed: InstalledPackage[];
  removed: RemovedPackage[];
  /** Lines the build printed about choices it made (a pytest pin that the index does not have). */
  notes: string[];
  builtAt: string;
  buildMs: number;
}

/** The manifest of a cache entry folder. */
export async function readEnvironmentManifest(entryDir: string): Promise<EnvironmentManifest> {
  return JSON.parse(await readFile(join(entryDir, ENTRY_MARKER), 'utf8')) as EnvironmentManifest;
}
