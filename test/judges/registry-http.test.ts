/**
 * The judge registry over real HTTP: the local runtime as a child process (`flywheel start`), the routes with the
 * runtime's admin key and a read-only key, then the `flywheel judges` CLI against the same runtime. Calibration
 * reports are stored through the registry's use case on the runtime's data folder (the calibration routes are
 * another part's).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import type { JudgeRef } from '../../lib/judges/judge-identity.ts';
import { derivationRecord } from '../../lib/judges/derive/record-codecs.ts';
import type { Derivation, DerivationReport } from '../../lib/judges/derive/schemas.ts';
import { derivationIdOf } from '../../lib/judges/workflow/derive-steps.ts';
import { saveCalibrationReport } from '../../lib/judges/registry/calibrations.ts';
import type { CalibrationReport } from '../../lib/judges/schemas.ts';
import { runCli, startRuntime, type RuntimeProcess } from '../e2e/runtime-process.ts';
import { definition, report } from './registry-fixture.ts';

let dataDir: string;
let rt: RuntimeProcess;
let readKey: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'flywheel-judges-http-'));
  rt = await startRuntime({ dataDir, env: { FLYWHEEL_SCHEDULE: 'off' } });
  const { stdout } = await runCli(['keys', 'create', '--tenant', 'default', '--scopes', 'read', '--name', 'dashboard', '--json', '--data-dir', dataDir]);
  readKey = (JSON.parse(stdout) as { key: string }).key;
}, 60_000);

afterAll(async () => {
  expect(await rt?.stop('SIGTERM')).toBe(0);
  rmSync(dataDir, { recursive: true, force: true });
});

async function api(path: string, init: { method?: string; body?: unknown; key?: string } = {}) {
  const res = await fetch(`${rt.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'x-api-key': init.key ?? rt.apiKey, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Stores a report through the use case on the runtime's own data folder. */
async function calibrate(r: CalibrationReport): Promise<void> {
  const ports = openLocalPorts(dataDir);
  try {
    await saveCalibrationReport(ports, r);
  } finally {
    ports.close();
  }
}

describe('the judge registry API', () => {
  it('registers, lists, shows, gates promotion, forces with a reason, retires; reads need read, the rest admin', { timeout: 60_000 }, async () => {
    const created = await api('/v1/judges', { method: 'POST', body: { ...definition({ name: 'http-judge' }), acceptanceRule: { minItems: 50 } } });
    expect(created.status).toBe(201);
    const a = created.body.ref as JudgeRef;
    expect(created.body).toMatchObject({ created: true, judge: { status: 'candidate', registeredBy: expect.stringMatching(/^key:/) }, acceptanceRule: { minItems: 50 } });
    const again = await api('/v1/judges', { method: 'POST', body: definition({ name: 'http-judge' }) });
    expect(again).toMatchObject({ status: 200, body: { created: false, ref: a } });

    const bad = await api('/v1/judges', { method: 'POST', body: { name: 'http-judge', kind: 'oracle', model: 'm', decoding: { temperature: 9 } } });
    expect(bad.status).toBe(400);
    expect((bad.body.issues as Array<{ path: string }>).map((i) => i.path)).toEqual(expect.arrayContaining(['kind', 'decoding.temperature']));

    // The read key reads, and is refused every write.
    const listed = await api('/v1/judges', { key: readKey });
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([expect.objectContaining({ name: 'http-judge', kind: 'rubric', versions: 1 })]);
    expect((await api('/v1/judges', { method: 'POST', body: definition({ name: 'other' }), key: readKey })).status).toBe(403);
    expect((await api('/v1/judges/http-judge/promote', { method: 'POST', body: { version: a.version }, key: readKey })).status).toBe(403);
    expect((await api('/v1/judges/http-judge/retire', { method: 'POST', body: { version: a.version }, key: readKey })).status).toBe(403);

    // Refused without a report, and with one under minItems; accepted with one that passes.
    const refused = await api('/v1/judges/http-judge/promote', { method: 'POST', body: { version: a.version } });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('no calibration report');
    await calibrate(report(a, { estimate: 0.9, low: 0.8 }, { n: 40, createdAt: '2026-12-01T00:00:00.000Z' }));
    const small = await api('/v1/judges/http-judge/promote', { method: 'POST', body: { version: a.version } });
    expect(small.status).toBe(409);
    expect(small.body.message).toContain('n 40 < minItems 50');
    await calibrate(report(a, { estimate: 0.9, low: 0.8 }, { n: 80, createdAt: '2026-12-02T00:00:00.000Z' }));
    const promoted = await api('/v1/judges/http-judge/promote', { method: 'POST', body: { version: a.version, by: 'ana' } });
    expect(promoted).toMatchObject({ status: 200, body: { changed: true, judge: { status: 'promoted', promotion: { by: 'ana', forced: false } } } });

    const shown = await api('/v1/judges/http-judge', { key: readKey });
    expect(shown).toMatchObject({ status: 200, body: { promoted: a.version, versionCount: 1 } });
    expect((shown.body.versions as Array<{ latestCalibration?: { createdAt: string } }>)[0]!.latestCalibration?.createdAt).toBe('2026-12-02T00:00:00.000Z');
    const calibrations = await api(`/v1/judges/http-judge/calibrations?version=${a.version}`, { key: readKey });
    expect((calibrations.body.items as Array<{ createdAt: string }>).map((r) => r.createdAt)).toEqual(['2026-12-02T00:00:00.000Z', '2026-12-01T00:00:00.000Z']);

    expect((await api('/v1/judges/nobody')).status).toBe(404);
    expect((await api('/v1/judges/Not%20A%20Name')).status).toBe(400);
    expect((await api('/v1/judges/http-judge/promote', { method: 'POST', body: { version: 'nothex' } })).status).toBe(400);
    expect((await api('/v1/judges/http-judge/promote', { method: 'POST', body: { version: 'abcdefabcdef' } })).status).toBe(404);

    // A second version without a report: refused, then forced (a reason is required).
    const b = (await api('/v1/judges', { method: 'POST', body: definition({ name: 'http-judge', prompt: 'Stricter.' }) })).body.ref as JudgeRef;
    expect((await api('/v1/judges/http-judge/promote', { method: 'POST', body: { version: b.version, force: true } })).status).toBe(400);
    const forced = await api('/v1/judges/http-judge/promote', { method: 'POST', body: { version: b.version, force: true, reason: 'hand-checked' } });
    expect(forced).toMatchObject({ status: 200, body: { previous: a, decision: { accepted: false }, judge: { promotion: { forced: true, reason: 'hand-checked' } } } });

    const retired = await api('/v1/judges/http-judge/retire', { method: 'POST', body: { version: a.version, reason: 'superseded' } });
    expect(retired).toMatchObject({ status: 200, body: { changed: true, judge: { status: 'retired' } } });
    const doc = await api('/v1/openapi.json');
    expect(Object.keys(doc.body.paths as object)).toEqual(expect.arrayContaining(['/v1/judges', '/v1/judges/{name}', '/v1/judges/{name}/promote', '/v1/judges/{name}/retire', '/v1/judges/{name}/calibrations']));
  });
});

describe('flywheel judges', () => {
  it('lists, shows, registers from a file, promotes with --force --reason and retires', { timeout: 180_000 }, async () => {
    const file = join(dataDir, 'cli-judge.json');
    writeFileSync(file, JSON.stringify(definition({ name: 'cli-judge' })));
    const target = ['--data-dir', dataDir];
    const registered = await runCli(['judges', 'register', '--file', file, ...target]);
    const version = /registered cli-judge@([0-9a-f]{12}) \(candidate\)/.exec(registered.stdout)?.[1];
    expect(version).toBeDefined();
    expect((await runCli(['judges', 'register', '--file', file, ...target])).stdout).toContain(`already registered cli-judge@${version}`);

    const list = await runCli(['judges', 'list', ...target]);
    expect(list.stdout).toMatch(/name\s+kind\s+promoted/);
    expect(list.stdout).toMatch(/cli-judge\s+rubric/);

    const refused = await runCli(['judges', 'promote', `cli-judge@${version}`, ...target]).catch((e: { stderr: string; code: number }) => e);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining('no calibration report') });
    const forced = await runCli(['judges', 'promote', `cli-judge@${version}`, '--force', '--reason', 'bootstrapping the first judge', ...target]);
    expect(forced.stdout).toContain(`promoted cli-judge@${version}`);
    expect(forced.stdout).toContain('forced past the acceptance rule');

    const shown = await runCli(['judges', 'show', 'cli-judge', ...target]);
    expect(shown.stdout).toContain(`promoted ${version}`);
    expect(shown.stdout).toMatch(new RegExp(`${version}\\s+promoted`));
    expect(shown.stdout).toContain('forced: bootstrapping the first judge');

    const json = JSON.parse((await runCli(['judges', 'show', 'cli-judge', '--json', ...target])).stdout) as { promoted: string };
    expect(json.promoted).toBe(version);

    expect((await runCli(['judges', 'retire', `cli-judge@${version}`, '--reason', 'done', ...target])).stdout).toContain(`retired cli-judge@${version}`);
    const bare = await runCli(['judges', 'retire', 'cli-judge', ...target]).catch((e: { stderr: string }) => e);
    expect(bare.stderr).toContain('name a version');
  });
});

describe('judge derivations', () => {
  it('lists derivations and shows one with its report, by id or by checkpoint, over HTTP and the CLI', { timeout: 120_000 }, async () => {
    const derivation: Derivation = {
      kind: 'derivation',
      derivationId: derivationIdOf('coder:top-1'),
      checkpointId: 'coder:top-1',
      model: 'openai:top@http://127.0.0.1:1',
      judges: [{ name: 'fm', goldSet: 'fm-gold' }],
      skipped: [{ name: 'pairs', reason: 'no gold set' }],
      status: 'finished',
      createdAt: '2026-12-03T10:00:00.000Z',
      finishedAt: '2026-12-03T10:05:00.000Z',
      reportKey: `judges/derivations/${derivationIdOf('coder:top-1')}/report.json`,
      promoted: [{ name: 'fm-distilled', version: 'abc123abc123' }],
    };
    const people = { calibrationId: 'cal-1', goldSet: 'fm-gold', criteria: [{ id: 'mode:scope', n: 40, kappa: { estimate: 0.9, low: 0.8, high: 0.97 } }], costPerVerdictUsd: 0.000001 };
    const report: DerivationReport = {
      derivationId: derivation.derivationId,
      checkpointId: derivation.checkpointId,
      createdAt: derivation.createdAt,
      finishedAt: derivation.finishedAt!,
      skipped: derivation.skipped,
      promoted: derivation.promoted!,
      judges: [
        {
          derivationId: derivation.derivationId,
          name: 'fm',
          judgeKind: 'failure-mode',
          goldSet: 'fm-gold',
          distilled: {
            ref: { name: 'fm-distilled', version: 'abc123abc123' },
            people,
            teacher: { n: 12, inSample: false, labels: [{ id: 'mode:scope', n: 12, agreement: 1, kappa: 1 }] },
            costPerVerdictUsd: 0.000001,
            decision: { accepted: true, reasons: [], promoted: true },
          },
          updatedAt: derivation.finishedAt!,
        },
      ],
    };
    const ports = openLocalPorts(dataDir);
    try {
      await ports.records.put(derivationRecord.encode(derivation));
      await ports.blobs.put(derivation.reportKey!, JSON.stringify(report), { contentType: 'application/json' });
    } finally {
      ports.close();
    }
    const list = await api('/v1/judge-derivations', { key: readKey });
    expect(list.status).toBe(200);
    expect((list.body.items as Derivation[]).map((d) => d.derivationId)).toEqual([derivation.derivationId]);
    const byCheckpoint = await api(`/v1/judge-derivations/${encodeURIComponent('coder:top-1')}?by=checkpoint`, { key: readKey });
    expect(byCheckpoint).toMatchObject({ status: 200, body: { derivation: { derivationId: derivation.derivationId } } });
    const one = await api(`/v1/judge-derivations/${derivation.derivationId}`, { key: readKey });
    expect(one).toMatchObject({ status: 200, body: { derivation: { status: 'finished' }, report: { promoted: [{ name: 'fm-distilled' }] } } });
    expect((await api('/v1/judge-derivations/nope')).status).toBe(404);
    expect((await api('/v1/judge-derivations?limit=0')).status).toBe(400);

    const target = ['--data-dir', dataDir];
    const listed = await runCli(['judges', 'derivations', ...target]);
    expect(listed.stdout).toMatch(/derive-coder-top-1-[0-9a-f]{8}\s+coder:top-1\s+finished\s+fm\s+fm-distilled@abc123abc123/);
    const shown = await runCli(['judges', 'derivations', 'coder:top-1', '--checkpoint', ...target]);
    expect(shown.stdout).toContain('skipped pairs: no gold set');
    expect(shown.stdout).toMatch(/fm\s+distilled\s+fm-distilled@abc123abc123\s+mode:scope κ 1\.00\s+mode:scope 0\.90 \[0\.80\]\s+0\.000001\s+promoted/);
  });
});
