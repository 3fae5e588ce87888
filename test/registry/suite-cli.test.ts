/**
 * `flywheel suite list|show|register|retire` as a user runs it: the CLI as a child process, talking real HTTP to the
 * local server over the route table and the local drivers.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../lib/api/routes.ts';
import { STAGES } from '../../lib/config/stages.ts';
import { createLocalServer, type LocalServer } from '../../lib/local/server.ts';
import { getSuite } from '../../lib/registry/get-suite.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { driveSweep } from '../sweeps/support/drive-sweep.ts';
import { rateScript } from '../sweeps/support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
let fx: SweepFixture;
let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  fx?.close();
});

type Outcome = { code: number; stdout: string; stderr: string };

async function serve(): Promise<(args: string[]) => Promise<Outcome>> {
  server = createLocalServer({ routes, ports: fx.ports, apiKeys: ['k'], throttle: STAGES.local.api });
  const url = await server.listen(0);
  return (args) =>
    run(process.execPath, ['bin/flywheel.ts', ...args, '--url', url, '--api-key', 'k'], { cwd: ROOT }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (e: Outcome) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );
}

/** The CLI on the data folder itself, without the API (how a folder suite is registered: never over HTTP). */
function onDataFolder(): (args: string[]) => Promise<Outcome> {
  return (args) =>
    run(process.execPath, ['bin/flywheel.ts', ...args, '--data-dir', fx.dir], { cwd: ROOT, env: { ...process.env, FLYWHEEL_API_URL: '' } }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (e: Outcome) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );
}

describe('flywheel suite', () => {
  it('register --file: v1, an unchanged file is a no-op, an edited one the next version; a bad file exits 1 naming each field', async () => {
    fx = openSweepFixture();
    const api = await serve();
    // A folder suite names a folder of this machine: registered into the data folder directly, refused over the API.
    const cli = onDataFolder();
    const file = join(fx.dir, 'suite.json');
    mkdirSync(join(fx.dir, 'tasks'));
    const suite = { id: 'smoke', visibility: 'public', owner: 'evals', tasks: { kind: 'folder', path: 'tasks' }, taskIds: ['calc/add', 'calc/sub'] };
    writeFileSync(file, JSON.stringify(suite));
    const overHttp = await api(['suite', 'register', '--file', file]);
    expect(overHttp.code).toBe(1);
    expect(overHttp.stderr).toContain('never through the API');
    const first = await cli(['suite', 'register', '--file', file]);
    expect(first).toMatchObject({ code: 0, stdout: 'registered smoke v1: 2 task(s), public, active\n' });
    // The relative folder was resolved against the file's folder.
    expect((await getSuite(fx.ports.records, 'smoke')).tasks).toEqual({ kind: 'folder', path: join(fx.dir, 'tasks') });
    expect((await cli(['suite', 'register', '--file', file])).stdout).toBe('smoke v1 is already registered with this content: nothing changed (active)\n');
    writeFileSync(file, JSON.stringify({ ...suite, taskIds: [...suite.taskIds, 'calc/mul'] }));
    expect((await cli(['suite', 'register', '--file', file])).stdout).toBe('registered smoke v2 (was v1): 3 task(s), public, active\n');

    writeFileSync(file, JSON.stringify({ id: 'bad id', visibility: 'open', tasks: { kind: 'records' }, taskIds: ['a'] }));
    const bad = await api(['suite', 'register', '--file', file]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Flywheel.ValidationError: Invalid suite:');
    expect(bad.stderr).toMatch(/^ {2}id: letters, digits/m);
    expect(bad.stderr).toMatch(/^ {2}visibility: /m);
    expect(bad.stderr).toMatch(/^ {2}owner: /m);
    writeFileSync(file, '{ not json');
    const broken = await api(['suite', 'register', '--file', file]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('suite.json is not JSON');
  });

  it('list, show (with the best-score series), retire; --help describes the group', async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 2, suites: 2, tasks: 20 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    for (const [sweepId, rates] of [['s1', { 'ck-0': 0.4, 'ck-1': 0.6 }], ['s2', { 'ck-0': 0.9, 'ck-1': 0.5 }]] as const) {
      fx.tick(2 * 24 * 3600 * 1000);
      await driveSweep(steps, fx.ports, { sweepId, trigger: 'manual', requestedAt: fx.clock.now.toISOString(), suites: ['suite-0'], modes: ['strict'] }, {
        script: rateScript((ck) => rates[ck as keyof typeof rates]),
      });
    }
    const cli = await serve();

    const list = await cli(['suite', 'list']);
    expect(list.code).toBe(0);
    const rows = list.stdout.split('\n');
    expect(rows[0]).toMatch(/^suite\s+version\s+visibility\s+status\s+tasks\s+owner\s+created\s+best strict\s+useful life$/);
    expect(rows.find((l) => l.startsWith('suite-0 '))).toMatch(/^suite-0\s+v1\s+public\s+saturated\s+20\s+evals\s+\S+\s+90\.0% ck-0\s+4 days$/);
    expect(rows.find((l) => l.startsWith('suite-1 '))).toMatch(/^suite-1\s+v1\s+private\s+active\s+20\s+evals\s+\S+\s+—\s+—$/);

    const show = await cli(['suite', 'show', 'suite-0']);
    expect(show.stdout).toContain('suite suite-0 v1: saturated (public)');
    expect(show.stdout).toContain('saturated 2026-12-06T10:00:02.000Z: useful life 4 days');
    expect(show.stdout).toContain('best strict: 90.0% by ck-0 in sweep s2');
    const series = show.stdout.split('\n').filter((l) => /^2026-\S+\s+s\d/.test(l));
    expect(series).toHaveLength(2);
    expect(series[0]).toMatch(/^2026-12-04T10:00:02\.000Z\s+s1\s+v1\s+ck-1\s+60\.0%$/);
    expect(series[1]).toMatch(/^2026-12-06T10:00:02\.000Z\s+s2\s+v1\s+ck-0\s+90\.0%\s+← best$/);
    const json = await cli(['suite', 'show', 'suite-0', '--json', '--points', '1']);
    expect(JSON.parse(json.stdout).bestScores.map((p: { sweepId: string }) => p.sweepId)).toEqual(['s2']);
    expect((await cli(['suite', 'show', 'suite-1'])).stdout).toContain('no sweep has scored it yet');
    const missing = await cli(['suite', 'show', 'ghost']);
    expect(missing).toMatchObject({ code: 1, stderr: 'Flywheel.NotFoundError: No suite ghost\n' });

    const retired = await cli(['suite', 'retire', 'suite-0', '--reason', 'saturated: ck-0 at 90% strict', '--by', 'evals']);
    expect(retired.stdout).toMatch(/^retired suite-0 v1 at 2026-12-06T10:00:02\.000Z: saturated: ck-0 at 90% strict\n$/);
    expect((await cli(['suite', 'retire', 'suite-0', '--reason', 'again'])).stdout).toContain('was already retired');
    expect((await cli(['suite', 'retire', 'suite-1'])).stderr).toContain("required option '--reason <text>' not specified");
    const onlyRetired = await cli(['suite', 'list', '--status', 'retired']);
    expect(onlyRetired.stdout.split('\n').filter((l) => l.startsWith('suite-'))).toEqual([expect.stringMatching(/^suite-0\s+v1\s+public\s+retired\s/)]);
    expect((await cli(['suite', 'show', 'suite-0'])).stdout).toContain('retired 2026-12-06T10:00:02.000Z by evals: saturated: ck-0 at 90% strict');

    const help = await run(process.execPath, ['bin/flywheel.ts', 'suite', '--help'], { cwd: ROOT });
    for (const sub of ['list', 'show', 'register', 'retire']) expect(help.stdout).toMatch(new RegExp(`^ {2}${sub}\\b`, 'm'));
    // Twelve CLI processes, each a Node start: on a loaded 2-core machine that outgrows the default 30 s.
  }, 180_000);
});
