/**
 * The rollout image's Dockerfile against the tree (no Docker daemon here to build it): everything it copies
 * exists and is let through its dockerignore, its entry point is the file the local jobs driver runs, and the
 * packages the namespace sandbox needs are installed in both targets.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LOCAL_JOB_DEFINITIONS, REPOSITORY_ROOT } from '../../lib/drivers/local/jobs/job-definitions.ts';

const dockerfile = readFileSync(join(REPOSITORY_ROOT, 'batch-images/rollout/Dockerfile'), 'utf8');
const ignore = readFileSync(join(REPOSITORY_ROOT, 'batch-images/rollout/Dockerfile.dockerignore'), 'utf8')
  .split('\n')
  .filter((l) => l.startsWith('!'))
  .map((l) => l.slice(1).replace(/\/\*\*$/, ''));

describe('batch-images/rollout/Dockerfile', () => {
  it('copies only paths that exist and that the dockerignore lets through', () => {
    const copies = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(' '));
    expect(copies).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', 'lib', 'batch-images/rollout']));
    for (const path of copies) {
      expect(existsSync(join(REPOSITORY_ROOT, path)), path).toBe(true);
      expect(ignore.some((allowed) => path === allowed || path.startsWith(`${allowed}/`)), path).toBe(true);
    }
  });

  it('runs the entry point the local driver runs, with the sandbox’s tools, in both targets', () => {
    const entrypoints = [...dockerfile.matchAll(/^ENTRYPOINT (.+)$/gm)].map((m) => JSON.parse(m[1]!) as string[]);
    expect(entrypoints).toHaveLength(2);
    for (const e of entrypoints) expect(e).toEqual(DEFAULT_LOCAL_JOB_DEFINITIONS['rollout']!.command);
    expect(existsSync(join(REPOSITORY_ROOT, entrypoints[0]![1]!))).toBe(true);
    const installs = [...dockerfile.matchAll(/apt-get install -y --no-install-recommends ([^\n&]+)/g)].map((m) => m[1]!.trim().split(/\s+/));
    expect(installs).toHaveLength(2);
    for (const packages of installs) expect(packages).toEqual(expect.arrayContaining(['git', 'iproute2', 'util-linux', 'python3']));
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-/m);
  });
});
