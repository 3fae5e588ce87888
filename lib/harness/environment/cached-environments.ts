/**
 * PLACEHOLDER (being replaced by the environment builder): the host toolchain as today's sandbox exposes it.
 * The real resolver builds a cached virtualenv / node_modules layer keyed by the tree's lockfiles.
 */
import type { SandboxEnvironment } from '../sandbox/sandbox.ts';
import type { EnvironmentRequest, EnvironmentResolver } from './environment-resolver.ts';

export interface CachedEnvironmentOptions {
  /** Where built environments are kept. Default `$TMPDIR/flywheel-envs`. */
  cacheDir?: string;
}

export class CachedEnvironmentResolver implements EnvironmentResolver {
  readonly options: CachedEnvironmentOptions;
  constructor(options: CachedEnvironmentOptions = {}) {
    this.options = options;
  }
  async resolve(_request: EnvironmentRequest): Promise<SandboxEnvironment> {
    return { id: 'host', binds: [], pathDirs: [] };
  }
}
