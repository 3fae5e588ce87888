/**
 * The environment a forge run tests in, and the leak probe over it. The forge tests in the same cached environment
 * the harness builds for tasks (the provider's resolver: dependencies from the lockfiles in a layer), resolved once up
 * front on the base tree so that a build failure stops the run before it starts, naming the file it installed from;
 * a local checkout's untracked, prepared `node_modules` or virtualenv is copied into that cache instead of a network
 * install (`prepared-layers.ts`). The record (`ForgeEnvironmentRecord`) goes on every task
 * (`metadata.forge.environment`). The probe searches what a sandbox of that environment can read besides the
 * workspace — its layers, the toolchains' package folders, the machine's — for the deleted code by content
 * (`environment-leak-index.ts`), from an index built once per environment on the host.
 */
import { resolve } from 'node:path';
import { FlywheelError } from '../../errors.ts';
import type { EnvironmentManifest } from '../../harness/environment/environment-manifest.ts';
import { isEnvironmentBuildError } from '../../harness/environment/environment-errors.ts';
import type { EnvironmentResolver } from '../../harness/environment/environment-resolver.ts';
import { git } from '../../harness/git/run-git.ts';
import type { SandboxEnvironment, SandboxProvider, SandboxSession } from '../../harness/sandbox/sandbox.ts';
import type { WorkRepo } from '../forge-git.ts';
import type { RunnableForgeSpec } from '../schemas.ts';
import { MAX_CODE_FILE_BYTES } from './code-index.ts';
import { EnvironmentLeakIndex } from './environment-leak-index.ts';
import { findPreparedFolders, seedPreparedLayers, type LayerCache, type PreparedManifest } from './prepared-layers.ts';
import { projectCopies } from './project-copies.ts';

/** The error name (without the `Flywheel.` prefix) of an environment the forge could not prepare. */
export const FORGE_ENVIRONMENT_ERROR = 'ForgeEnvironmentError';

export class ForgeEnvironmentError extends FlywheelError {
  /** The tree's files the failing install read (`package-lock.json`, `requirements.txt`). */
  readonly files: string[];
  constructor(message: string, files: string[], options?: ErrorOptions) {
    super(FORGE_ENVIRONMENT_ERROR, message, options);
    this.files = files;
  }
}

/** Packages listed per layer on a task (the count is always whole). */
export const MAX_RECORDED_PACKAGES = 400;

/** One layer of the environment, as a task records it. */
export interface ForgeEnvironmentLayer {
  kind: 'python' | 'node';
  /** The layer's cache key (`node-<hex>`). */
  key: string;
  /** `lockfile`: installed from the tree's manifests and lockfiles; `checkout`: copied from the checkout's prepared folder. */
  from: 'lockfile' | 'checkout';
  /** The checkout folder it was copied from (`/src/kit/node_modules -> /deps/kit-modules`). */
  preparedFrom?: string;
  /** The tree's files the install read. */
  inputs: string[];
  /** Where it is bound inside the sandbox. */
  target: string;
  /** `name@version`, at most MAX_RECORDED_PACKAGES of them. */
  packages: string[];
  packageCount: number;
  /** Copies of the project itself taken out (`url-kit@1.2.0: its name is the project's`). */
  removed: string[];
}

/** What a task records of the environment it was certified in (`metadata.forge.environment`). */
export interface ForgeEnvironmentRecord {
  /** The environment's id (hash of recipe and lockfiles), when one was resolved. */
  id?: string;
  layers: ForgeEnvironmentLayer[];
  /** What the leak probe searches, as the sandbox names it. */
  searched?: string[];
  /** Package folders that exist on the machine but are covered inside the sandbox (not reachable, not searched). */
  masked?: string[];
  /**
   * The project's own package installed by name where the sandbox can read it outside the layers (the machine's
   * `dist-packages`, a global `node_modules`): the content probe refuses the deletions it holds as source.
   */
  projectCopies?: string[];
  notes: string[];
}

/** Environments this process prepared, by id: what the probe searches for a session of that environment. */
const prepared = new Map<string, EnvironmentLeakIndex>();
/** Environments remembered at once (a long-lived process forging many repositories drops the oldest). */
export const MAX_PREPARED_ENVIRONMENTS = 8;

type ProviderParts = SandboxProvider & {
  environments?: EnvironmentResolver & Partial<LayerCache>;
  exposure?: () => Promise<{ paths: string[]; masks: string[] }>;
};

function isLayerCache(resolver: unknown): resolver is LayerCache {
  const r = resolver as Partial<LayerCache> | undefined;
  return typeof r?.cacheDir === 'string' && typeof r.plan === 'function';
}

function layerRecord(manifest: PreparedManifest): ForgeEnvironmentLayer {
  const packages = manifest.installed.map((p) => `${p.name}@${p.version}`);
  return {
    kind: manifest.kind,
    key: manifest.key,
    from: manifest.preparedFrom ? 'checkout' : 'lockfile',
    ...(manifest.preparedFrom ? { preparedFrom: manifest.preparedFrom } : {}),
    inputs: manifest.inputs,
    target: manifest.target,
    packages: packages.slice(0, MAX_RECORDED_PACKAGES),
    packageCount: packages.length,
    removed: manifest.removed.map((r) => `${r.name}@${r.version}: ${r.reason}`),
  };
}

async function isTrackedIn(work: WorkRepo, rel: string): Promise<boolean> {
  const r = await git(['--git-dir', work.gitDir, 'ls-tree', '--name-only', work.baseCommit, '--', rel], { allowFailure: true });
  return r.stdout.trim() !== '';
}

/**
 * Resolves (builds or takes from the cache) the environment the base tree calls for, seeding it first from a local
 * checkout's prepared dependency folders, and starts indexing what its sandboxes can read for the leak probe.
 * Throws `Flywheel.ForgeEnvironmentError` naming the lockfile when the environment cannot be built.
 *
 * @example
 * const environment = await prepareForgeEnvironment({ work, spec, provider });
 * environment.layers[0]; // { kind: 'node', from: 'checkout', preparedFrom: '/src/kit/node_modules', packageCount: 212, … }
 */
export async function prepareForgeEnvironment(input: { work: WorkRepo; spec: RunnableForgeSpec; provider: SandboxProvider }): Promise<ForgeEnvironmentRecord> {
  const { work, spec } = input;
  const provider = input.provider as ProviderParts;
  const resolver = provider.environments;
  if (!resolver || typeof resolver.resolve !== 'function') {
    return { layers: [], notes: ['the sandbox provider resolves no environment of its own: sandboxes run in what it gives, and the leak probe has nothing to search'] };
  }
  const notes: string[] = [];
  if (spec.repo.kind === 'local' && isLayerCache(resolver)) {
    const folders = await findPreparedFolders(resolve(spec.repo.path), (rel) => isTrackedIn(work, rel));
    const seeded = await seedPreparedLayers({ cache: resolver, treeDir: work.checkoutDir, prepared: folders }).catch((error: unknown) => {
      // The plan reads the tree's manifests first: its failure names them, like a failed build.
      const files = isEnvironmentBuildError(error) ? error.files : [];
      const from = files.length > 0 ? ` (planned from ${files.join(', ')})` : '';
      const what = [folders.node, folders.python].filter(Boolean).join(', ');
      throw new ForgeEnvironmentError(`the checkout's prepared dependencies (${what}) could not be copied into the environment cache${from}: ${(error as Error).message}`, files, { cause: error });
    });
    notes.push(...seeded.notes);
  }
  let environment: SandboxEnvironment & { manifests?: EnvironmentManifest[] };
  try {
    environment = await resolver.resolve({ treeDir: work.checkoutDir });
  } catch (error) {
    const files = isEnvironmentBuildError(error) ? error.files : [];
    const from = files.length > 0 ? ` from ${files.join(', ')}` : '';
    const hint = spec.repo.kind === 'local' ? '; a local checkout may bring its own prepared node_modules or .venv (untracked) instead' : '';
    throw new ForgeEnvironmentError(`the repository's environment could not be built${from}: ${(error as Error).message}${hint}`, files, { cause: error });
  }
  const exposure = typeof provider.exposure === 'function' ? await provider.exposure().catch(() => undefined) : undefined;
  let index = prepared.get(environment.id);
  if (!index) {
    index = await EnvironmentLeakIndex.open(environment, { exposedPaths: exposure?.paths ?? [], masks: exposure?.masks ?? [] });
    prepared.set(environment.id, index);
    while (prepared.size > MAX_PREPARED_ENVIRONMENTS) prepared.delete(prepared.keys().next().value!);
  }
  const manifests = (environment.manifests ?? []) as PreparedManifest[];
  if (manifests.length === 0) notes.push('the environment has no layers: only the toolchains and the machine’s package folders are shown');
  const copies = await projectCopies(index.roots, {
    names: manifests.flatMap((m) => m.project?.names ?? []),
    topLevel: manifests.flatMap((m) => m.project?.topLevel ?? []),
  });
  if (copies.length > 0) {
    notes.push(`the project's own package is installed where the sandbox can read it (${copies.join(', ')}): the leak probe refuses a deletion it holds as source, but bytecode or a minified build is not compared`);
  }
  return {
    id: environment.id,
    layers: manifests.map(layerRecord),
    searched: index.roots.map((r) => r.inside),
    masked: index.masked,
    ...(copies.length > 0 ? { projectCopies: copies } : {}),
    notes,
  };
}

export interface EnvironmentLeakProbe {
  ok: boolean;
  /** Where the deleted code was found (`/opt/flywheel/env/python/lib/…/click/_compat.py`), with what matched. */
  found: string[];
  problems: string[];
  /** What was searched, or why nothing was. */
  notes?: string[];
  /** Files searched and the lookup's milliseconds (the index is built once per environment, before). */
  files?: number;
  ms?: number;
}

/**
 * Searches what the sandbox can read besides the workspace (its environment's layers, the toolchains' and the
 * machine's package folders) for the removed code, by content: a file holding most of its fingerprints or probe lines
 * is a copy an agent could read the answer from.
 *
 * @example
 * const probe = await probeEnvironmentLeaks(session, removedLinesOfPatch(removalPatch));
 * if (!probe.ok) reject('answer-reachable', probe.found.join('; '));
 */
export async function probeEnvironmentLeaks(session: SandboxSession, removedCode: string): Promise<EnvironmentLeakProbe> {
  const id = session.taskEnvironment?.id;
  const index = id ? prepared.get(id) : undefined;
  if (!index) {
    // A sandbox whose environment differs from the one prepared (a candidate that edits a manifest the environment
    // is keyed on, or one dropped from the map) can read folders no index covers: refused rather than trusted.
    if (id && prepared.size > 0) {
      return { ok: false, found: [], problems: [`the sandbox's environment ${id} is not the one this forge run prepared and searched: what it can read was not searched`] };
    }
    return { ok: true, found: [], problems: [], notes: [`the environment ${id ?? '(none)'} was not prepared by this forge run: not searched`] };
  }
  let search;
  try {
    search = await index.search(removedCode);
  } catch (error) {
    // Not searched is not clean: a folder the index could not read may hold the answer.
    return { ok: false, found: [], problems: [`the environment's index could not be built, so what the sandbox can read was not searched: ${(error as Error).message}`] };
  }
  const found = search.leaks.slice(0, 5).map((l) => {
    const what = [`${Math.round(l.share * 100)}% of the deleted code's fingerprints (${l.shared}/${l.distinctive})`, ...(l.lines > 0 ? [`${l.lines} removed line(s) verbatim`] : [])];
    return `${l.inside} (${what.join(', ')})`;
  });
  return {
    ok: found.length === 0,
    found,
    problems: found.length > 0 ? [`the deleted code is reachable in the environment (${search.leaks.length} file(s))`] : [],
    notes: [
      `searched ${search.files} file(s) under ${index.roots.length} folder(s)${index.masked.length ? `; masked: ${index.masked.join(', ')}` : ''}`,
      ...(search.oversizeCount > 0 ? [`${search.oversizeCount} code file(s) over ${MAX_CODE_FILE_BYTES / (1 << 20)} MB not searched (${search.oversize.join(', ')})`] : []),
    ],
    files: search.files,
    ms: search.ms,
  };
}
