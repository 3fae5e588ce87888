import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedPreparedLayers } from '../../../lib/forge/environment/prepared-layers.ts';
import { projectCopies } from '../../../lib/forge/environment/project-copies.ts';
import { cachedEnvironmentResolver } from '../../../lib/harness/sandbox/namespace-sandbox.ts';

describe('a seeded layer when the checkout installs again later (real cache, real copies)', () => {
  let data: string;

  beforeAll(async () => {
    data = await mkdtemp(join(tmpdir(), 'fw-prepared-layers-'));
  });

  afterAll(async () => {
    await rm(data, { recursive: true, force: true });
  });

  it('keeps the first copy and says the checkout changed since, naming the entry to remove', async () => {
    const tree = join(data, 'tree');
    const modules = join(data, 'checkout', 'node_modules');
    await mkdir(tree, { recursive: true });
    await writeFile(join(tree, 'package.json'), '{ "name": "url-kit", "version": "1.0.0", "devDependencies": { "check-kit": "1.0.0" } }\n');
    await mkdir(join(modules, 'check-kit'), { recursive: true });
    await writeFile(join(modules, 'check-kit', 'package.json'), '{ "name": "check-kit", "version": "1.0.0" }\n');
    await writeFile(join(modules, '.package-lock.json'), '{ "lockfileVersion": 3 }\n');
    const cache = cachedEnvironmentResolver({ cacheDir: join(data, 'envs') });

    const first = await seedPreparedLayers({ cache, treeDir: tree, prepared: { node: modules } });
    expect(first.seeded).toEqual([{ kind: 'node', key: expect.stringMatching(/^node-/), from: modules }]);
    const key = first.seeded[0]!.key;
    const manifest = JSON.parse(await readFile(join(data, 'envs', key, 'env.json'), 'utf8')) as { preparedStamp?: string };
    expect(manifest.preparedStamp).toMatch(/^\d/);

    const again = await seedPreparedLayers({ cache, treeDir: tree, prepared: { node: modules } });
    expect(again.seeded).toEqual([]);
    expect(again.notes.join('\n')).not.toContain('changed after it was copied');

    // npm rewrites its hidden lockfile on every install; the wait is for the file system's clock to move.
    const before = manifest.preparedStamp;
    let stale: string[] = [];
    for (let i = 0; i < 100 && stale.length === 0; i++) {
      await writeFile(join(modules, '.package-lock.json'), `{ "lockfileVersion": 3, "install": ${i} }\n`);
      stale = (await seedPreparedLayers({ cache, treeDir: tree, prepared: { node: modules } })).notes.filter((n) => n.includes('changed after it was copied'));
    }
    expect(stale).toEqual([expect.stringContaining(`remove ${join(data, 'envs', key)} to copy it again`)]);
    expect(JSON.parse(await readFile(join(data, 'envs', key, 'env.json'), 'utf8')).preparedStamp).toBe(before);
  });

});

describe("the project's own package by name (real folders)", () => {
  let data: string;

  beforeAll(async () => {
    data = await mkdtemp(join(tmpdir(), 'fw-project-copies-'));
  });

  afterAll(async () => {
    await rm(data, { recursive: true, force: true });
  });

  it("names the project's own package installed by name in the machine's and toolchains' folders, not in layers", async () => {
    const site = join(data, 'usr/lib/python3/dist-packages');
    const globalModules = join(data, 'prefix/lib/node_modules');
    const layer = join(data, 'layer');
    await mkdir(join(site, 'click'), { recursive: true });
    await writeFile(join(site, 'click', '__init__.pyc'), 'bytecode');
    await mkdir(join(site, 'click-8.1.7.dist-info'), { recursive: true });
    await mkdir(join(site, 'rich'), { recursive: true });
    await mkdir(join(globalModules, 'url-kit'), { recursive: true });
    await writeFile(join(globalModules, 'url-kit', 'package.json'), '{ "name": "url-kit" }\n');
    await mkdir(join(layer, 'click'), { recursive: true });
    const copies = await projectCopies(
      [
        { source: site, inside: '/usr/lib/python3/dist-packages', kind: 'machine' },
        { source: globalModules, inside: '/opt/node/lib/node_modules', kind: 'toolchain' },
        { source: layer, inside: '/opt/flywheel/env/python', kind: 'layer' },
      ],
      { names: ['click', 'url-kit'], topLevel: ['click'] },
    );
    expect(copies.sort()).toEqual(['/opt/node/lib/node_modules/url-kit', '/usr/lib/python3/dist-packages/click', '/usr/lib/python3/dist-packages/click-8.1.7.dist-info']);
  });
});
