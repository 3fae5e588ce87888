/**
 * The judge registry's use cases over the local drivers (SQLite records, the local event log): a judge's identity
 * and version, idempotent registration, promotion gated by the acceptance rule on calibration reports, forcing with
 * a reason, one promoted version per name under concurrent promotions, demotion, retirement, resolution.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorNames, ValidationError } from '../../lib/errors.ts';
import { JUDGE_DEMOTED, JUDGE_PROMOTED } from '../../lib/judges/events.ts';
import { judgeIdentity, parseJudgeDefinition, type JudgeRef } from '../../lib/judges/judge-identity.ts';
import { latestCalibration, listCalibrations, saveCalibrationReport } from '../../lib/judges/registry/calibrations.ts';
import { demoteJudge, promoteJudge, retireJudge } from '../../lib/judges/registry/promote-judge.ts';
import { getJudge, listJudges, resolveJudge } from '../../lib/judges/registry/read-judges.ts';
import { judgeKeys } from '../../lib/judges/registry/record-keys.ts';
import { judgeVersionRecord } from '../../lib/judges/registry/record-codecs.ts';
import { registerJudge } from '../../lib/judges/registry/register-judge.ts';
import {
  JudgeNotFoundError,
  JudgeNotPromotedError,
  JudgePromotionConflictError,
  JudgePromotionRefusedError,
  JudgeRegistryErrorNames,
  JudgeRetiredError,
} from '../../lib/judges/registry/registry-errors.ts';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import type { PutOptions, RecordItem, RecordsPort } from '../../lib/ports/records.ts';
import { MalformedRecordError } from '../../lib/shared/record-codec.ts';
import { AcceptanceRuleSchema } from '../../lib/judges/schemas.ts';
import { definition, report, tempRegistryPorts } from './registry-fixture.ts';

let env: ReturnType<typeof tempRegistryPorts> | undefined;
afterEach(() => {
  env?.cleanup();
  env = undefined;
});
const open = () => (env = tempRegistryPorts()).ports;
const events = (ports: LocalPorts, type: string) => ports.events.recent({ type, limit: 100 });

describe('a judge identity', () => {
  const base = parseJudgeDefinition(definition());
  const version = judgeIdentity(base).version;

  it.each([
    ['model', { model: 'bedrock:anthropic.claude-x' }],
    ['prompt', { prompt: 'Grade strictly.' }],
    ['rubric', { rubric: [{ id: 'scope', criterion: 'Changes only what is asked', weight: 2 }] }],
    ['rubric weight', { rubric: [{ id: 'scope', criterion: 'Changes only what the instruction asks for', weight: 3 }, { id: 'tests', criterion: 'Leaves the tests passing', weight: 1 }] }],
    ['decoding', { decoding: { temperature: 0.2, maxTokens: 1024 } }],
    ['output schema', { outputSchema: { type: 'object', properties: { verdict: { type: 'string' } } } }],
    ['taxonomy version', { taxonomyVersion: 2 }],
    ['kind', { kind: 'pairwise' as const }],
    ['checkpoint it was derived from', { derivedFrom: { checkpoint: 'ckpt-7' } }],
    ['teacher it was distilled from', { derivedFrom: { teacher: 'scope-judge@3f2a9c0d1e2b' } }],
  ])('changes with the %s', (_part, change) => {
    const changed = judgeIdentity(parseJudgeDefinition(definition(change)));
    expect(changed.version).toMatch(/^[0-9a-f]{12}$/);
    expect(changed.version).not.toBe(version);
  });

  it('does not change with key order, the description or the name', () => {
    const d = definition();
    const reordered = {
      outputSchema: { required: ['verdict'], properties: { reason: { type: 'string' }, verdict: { enum: ['pass', 'fail'], type: 'string' } }, type: 'object' },
      decoding: { maxTokens: 1024, temperature: 0 },
      rubric: d.rubric,
      prompt: d.prompt,
      model: d.model,
      kind: d.kind,
      name: 'another-name',
      description: 'the same judge under another name',
    };
    expect(judgeIdentity(parseJudgeDefinition(reordered)).version).toBe(version);
  });

  it('tells apart two checkpoints served behind one endpoint spec, and keeps the derivation in the stored identity', async () => {
    const one = judgeIdentity(parseJudgeDefinition(definition({ derivedFrom: { checkpoint: 'ckpt-1' } })));
    const two = judgeIdentity(parseJudgeDefinition(definition({ derivedFrom: { checkpoint: 'ckpt-2' } })));
    expect(one.version).not.toBe(two.version);
    expect(judgeIdentity(parseJudgeDefinition(definition({ derivedFrom: {} }))).version).toBe(version);
    const ports = open();
    const { judge } = await registerJudge(ports, definition({ derivedFrom: { checkpoint: 'ckpt-1', teacher: 'scope-judge@3f2a9c0d1e2b' } }));
    expect(judge.identity.derivedFrom).toEqual({ checkpoint: 'ckpt-1', teacher: 'scope-judge@3f2a9c0d1e2b' });
  });
});

describe('registering a judge', () => {
  it('is idempotent: the same definition is the same version, stored once with its full definition', async () => {
    const ports = open();
    const first = await registerJudge(ports, definition());
    expect(first.created).toBe(true);
    expect(first.judge.status).toBe('candidate');
    expect(first.ref.version).toBe(judgeIdentity(parseJudgeDefinition(definition())).version);
    expect(first.judge.definition.prompt).toBe(definition().prompt);
    expect(first.judge.identity).toMatchObject({ model: definition().model, decoding: { temperature: 0, maxTokens: 1024 } });
    expect(first.acceptanceRule).toEqual(AcceptanceRuleSchema.parse({}));
    expect(first.acceptanceRule).toMatchObject({ minKappaLower: 0.6, maxKappaDrop: 0, minItems: 30, requireCheaper: false });

    const again = await registerJudge(ports, { ...definition(), description: 'described now' });
    expect(again).toMatchObject({ created: false, ref: first.ref });
    const changed = await registerJudge(ports, definition({ prompt: 'Grade strictly; quote evidence.' }));
    expect(changed.created).toBe(true);
    expect(changed.ref.version).not.toBe(first.ref.version);

    const judge = await getJudge(ports, 'scope-judge');
    expect(judge.versionCount).toBe(2);
    expect(judge.versions.map((v) => v.version)).toEqual([first.ref.version, changed.ref.version]);
    expect(judge).toMatchObject({ latestVersion: changed.ref.version, versions: expect.any(Array), kind: 'rubric' });
    expect((await listJudges(ports, {})).items).toEqual([expect.objectContaining({ name: 'scope-judge', versions: 2 })]);
  });

  it('counts every version when registrations race, and the same one racing itself is stored once', async () => {
    const ports = open();
    const prompts = ['p1', 'p2', 'p3', 'p4', 'p5'];
    const results = await Promise.all([...prompts, 'p1', 'p1'].map((prompt) => registerJudge(ports, definition({ prompt }))));
    expect(results.filter((r) => r.created)).toHaveLength(5);
    expect(new Set(results.map((r) => r.ref.version)).size).toBe(5);
    const judge = await getJudge(ports, 'scope-judge');
    expect(judge.versionCount).toBe(5);
    expect((await listJudges(ports)).items[0]!.versions).toBe(5);
  });

  it('keeps a name to one kind, names bad fields, and reads a malformed record as one', async () => {
    const ports = open();
    await registerJudge(ports, definition());
    await expect(registerJudge(ports, definition({ kind: 'pairwise' }))).rejects.toMatchObject({ name: ErrorNames.validation, issues: [{ path: 'kind' }] });
    const bad = registerJudge(ports, { name: 'Bad Name', kind: 'nope', model: '' });
    await expect(bad).rejects.toBeInstanceOf(ValidationError);
    const issues = await bad.catch((e: ValidationError) => e.issues.map((i) => i.path));
    expect(issues).toEqual(expect.arrayContaining(['name', 'kind', 'model']));

    const v = judgeIdentity(parseJudgeDefinition(definition())).version;
    const k = judgeKeys.version('scope-judge', v);
    await ports.records.put({ ...(await ports.records.get(k.pk, k.sk))!, status: 'great' });
    await expect(resolveJudge(ports, `scope-judge@${v}`)).rejects.toBeInstanceOf(MalformedRecordError);
    expect(() => judgeVersionRecord.decode({ ...k, name: 'x' })).toThrow(/judge version record/);
  });

  it('keeps the acceptance rule given at registration, and it gates promotion', async () => {
    const ports = open();
    const { ref, acceptanceRule } = await registerJudge(ports, { ...definition(), acceptanceRule: { minKappaLower: 0.85 } });
    expect(acceptanceRule.minKappaLower).toBe(0.85);
    await saveCalibrationReport(ports, report(ref, { estimate: 0.9, low: 0.8 }));
    await expect(promoteJudge(ports, ref, { by: 'ana' })).rejects.toThrow(/kappa lower bound 0.800 < minKappaLower 0.850/);
    await registerJudge(ports, { ...definition(), acceptanceRule: { minKappaLower: 0.7 } });
    expect((await promoteJudge(ports, ref, { by: 'ana' })).changed).toBe(true);
  });
});

describe('promotion', () => {
  it('is refused without a calibration report, and with one the rule refuses', async () => {
    const ports = open();
    const { ref } = await registerJudge(ports, definition());
    const none = promoteJudge(ports, ref, { by: 'ana' });
    await expect(none).rejects.toBeInstanceOf(JudgePromotionRefusedError);
    await expect(none).rejects.toMatchObject({ name: ErrorNames.conflict, message: expect.stringContaining('no calibration report') });

    await saveCalibrationReport(ports, report(ref, { estimate: 0.7, low: 0.5 }));
    await expect(promoteJudge(ports, `scope-judge@${ref.version}`, { by: 'ana' })).rejects.toThrow(/scope: kappa lower bound 0.500 < minKappaLower 0.600/);
    await expect(promoteJudge(ports, 'scope-judge', { by: 'ana' })).rejects.toMatchObject({ issues: [{ path: 'version' }] });
    expect((await getJudge(ports, 'scope-judge')).promoted).toBeUndefined();
    expect(events(ports, JUDGE_PROMOTED)).toHaveLength(0);
  });

  it('promotes an accepted version, resolves the bare name to it, and refuses a worse one against the incumbent', async () => {
    const ports = open();
    const { ref: a } = await registerJudge(ports, definition());
    await saveCalibrationReport(ports, report(a, { estimate: 0.5, low: 0.3 }, { createdAt: '2026-12-01T00:00:00.000Z' }));
    await saveCalibrationReport(ports, report(a, { estimate: 0.85, low: 0.75 }, { createdAt: '2026-12-02T00:00:00.000Z' }));
    expect((await latestCalibration(ports, a))?.criteria[0]?.kappa.estimate).toBe(0.85);

    const promoted = await promoteJudge(ports, a, { by: 'ana' });
    expect(promoted).toMatchObject({ changed: true, decision: { accepted: true, reasons: [] }, judge: { status: 'promoted', promotion: { by: 'ana', forced: false } } });
    expect((await resolveJudge(ports, 'scope-judge')).version).toBe(a.version);
    expect((await promoteJudge(ports, a, { by: 'bo' })).changed).toBe(false);
    const published = events(ports, JUDGE_PROMOTED);
    expect(published).toHaveLength(1);
    expect(published[0]!.detail).toMatchObject({ judge: a, by: 'ana', forced: false });

    // b passes the threshold on its own but is worse than the incumbent.
    const { ref: b } = await registerJudge(ports, definition({ prompt: 'Another prompt.' }));
    await saveCalibrationReport(ports, report(b, { estimate: 0.8, low: 0.7 }));
    await expect(promoteJudge(ports, b, { by: 'ana' })).rejects.toThrow(/kappa 0.800 below the incumbent's 0.850/);

    // Forcing needs a reason; with one it is recorded, and the incumbent is demoted as superseded.
    await expect(promoteJudge(ports, b, { by: 'ana', force: true })).rejects.toMatchObject({ issues: [{ path: 'reason' }] });
    const forced = await promoteJudge(ports, b, { by: 'ana', force: true, reason: 'the gold set is stale; reviewed 50 verdicts by hand' });
    expect(forced).toMatchObject({ changed: true, previous: a, decision: { accepted: false }, judge: { promotion: { forced: true, reason: expect.stringContaining('stale'), replaced: a.version } } });
    const judge = await getJudge(ports, 'scope-judge');
    expect(judge.promoted).toBe(b.version);
    expect(judge.versions.map((v) => [v.version, v.status])).toEqual([[a.version, 'demoted'], [b.version, 'promoted']]);
    expect(judge.versions[0]!.demotion?.reason).toBe(`superseded by scope-judge@${b.version}`);
    expect(judge.versions[1]!.latestCalibration?.criteria[0]?.kappa.estimate).toBe(0.8);
    expect(events(ports, JUDGE_PROMOTED).at(-1)!.detail).toMatchObject({ judge: b, previous: a, forced: true });
  });

  it('a cheaper-only rule refuses a version that is not cheaper than the incumbent', async () => {
    const ports = open();
    const { ref: a } = await registerJudge(ports, { ...definition(), acceptanceRule: { requireCheaper: true } });
    await saveCalibrationReport(ports, report(a, { estimate: 0.8, low: 0.7 }, { cost: 0.002 }));
    await promoteJudge(ports, a, { by: 'ana' });
    const { ref: b } = await registerJudge(ports, definition({ model: 'reward-model:rm/v1' }));
    await saveCalibrationReport(ports, report(b, { estimate: 0.8, low: 0.7 }, { cost: 0.003 }));
    await expect(promoteJudge(ports, b, { by: 'ana' })).rejects.toThrow(/cost: candidate \$0.00300 per verdict is not below/);
    const { ref: c } = await registerJudge(ports, definition({ model: 'reward-model:rm/v2' }));
    await saveCalibrationReport(ports, report(c, { estimate: 0.8, low: 0.7 }, { cost: 0.0001 }));
    expect((await promoteJudge(ports, c, { by: 'ana' })).previous).toEqual(a);
  });

  it('keeps one promoted version when two promotions race: one wins, the other is told to read again', async () => {
    const ports = open();
    const { ref: a } = await registerJudge(ports, definition());
    const { ref: b } = await registerJudge(ports, definition({ prompt: 'Another prompt.' }));
    await saveCalibrationReport(ports, report(a, { estimate: 0.8, low: 0.7 }));
    await saveCalibrationReport(ports, report(b, { estimate: 0.8, low: 0.7 }));

    // Both promotions read the head before either writes it: each conditional head write waits for the other's.
    const racing = barrierOnHeadWrites(ports.records, 2);
    const view = { ...ports, records: racing };
    const results = await Promise.allSettled([promoteJudge(view, a, { by: 'ana' }), promoteJudge(view, b, { by: 'bo' })]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.reason).toBeInstanceOf(JudgePromotionConflictError);
    expect(lost[0]!.reason).toMatchObject({ name: ErrorNames.conflict });

    const winner = results[0]!.status === 'fulfilled' ? a : b;
    const judge = await getJudge(ports, 'scope-judge');
    expect(judge.promoted).toBe(winner.version);
    expect(judge.versions.filter((v) => v.status === 'promoted').map((v) => v.version)).toEqual([winner.version]);
    expect(events(ports, JUDGE_PROMOTED)).toHaveLength(1);
  });
});

describe('demotion and retirement', () => {
  async function promotedJudge(ports: LocalPorts): Promise<JudgeRef> {
    const { ref } = await registerJudge(ports, definition());
    await saveCalibrationReport(ports, report(ref, { estimate: 0.8, low: 0.7 }));
    await promoteJudge(ports, ref, { by: 'ana' });
    return ref;
  }

  it('demotes the promoted version: the bare name resolves to nothing, judge.demoted is published', async () => {
    const ports = open();
    const ref = await promotedJudge(ports);
    const demoted = await demoteJudge(ports, 'scope-judge', 'kappa 0.41 on the last 200 verdicts', { by: 'drift-watch' });
    expect(demoted).toMatchObject({ changed: true, judge: { status: 'demoted', demotion: { reason: 'kappa 0.41 on the last 200 verdicts', by: 'drift-watch' } } });
    await expect(resolveJudge(ports, 'scope-judge')).rejects.toBeInstanceOf(JudgeNotPromotedError);
    expect((await resolveJudge(ports, ref)).status).toBe('demoted');
    expect(events(ports, JUDGE_DEMOTED).map((e) => e.detail)).toEqual([expect.objectContaining({ judge: ref, retired: false, by: 'drift-watch' })]);
    expect((await demoteJudge(ports, ref, 'again')).changed).toBe(false);
    expect(events(ports, JUDGE_DEMOTED)).toHaveLength(1);
    // A demoted version may be promoted again when its report passes.
    expect((await promoteJudge(ports, ref, { by: 'ana' })).judge.status).toBe('promoted');
  });

  it('retires a version for good; retiring the promoted one demotes it', async () => {
    const ports = open();
    const ref = await promotedJudge(ports);
    const retired = await retireJudge(ports, ref, { reason: 'replaced by the distilled judge', by: 'ana' });
    expect(retired).toMatchObject({ changed: true, judge: { status: 'retired', retirement: { reason: 'replaced by the distilled judge' } } });
    expect((await getJudge(ports, 'scope-judge')).promoted).toBeUndefined();
    expect(events(ports, JUDGE_DEMOTED).at(-1)!.detail).toMatchObject({ judge: ref, retired: true });
    expect((await retireJudge(ports, ref)).changed).toBe(false);
    await expect(promoteJudge(ports, ref, { by: 'ana', force: true, reason: 'try' })).rejects.toBeInstanceOf(JudgeRetiredError);
    // Registering the same definition again keeps it retired: a change makes a new version.
    expect((await registerJudge(ports, definition())).judge.status).toBe('retired');
  });
});

describe('the registry errors', () => {
  it('carry the names their constant spells (404 and 409 in the HTTP status map)', () => {
    expect(new JudgeNotFoundError('x').name).toBe(JudgeRegistryErrorNames.notFound);
    expect(new JudgeNotPromotedError('x').name).toBe(JudgeRegistryErrorNames.notPromoted);
    expect(new JudgePromotionRefusedError('x@1', ['r']).name).toBe(JudgeRegistryErrorNames.promotionRefused);
    expect(new JudgePromotionConflictError('x').name).toBe(JudgeRegistryErrorNames.promotionConflict);
    expect(new JudgeRetiredError('x@1').name).toBe(JudgeRegistryErrorNames.retired);
    expect(Object.values(JudgeRegistryErrorNames).every((n) => n === ErrorNames.notFound || n === ErrorNames.conflict)).toBe(true);
  });
});

describe('calibration reports', () => {
  it('are stored only for registered versions, listed newest first, and summarised on the judge', async () => {
    const ports = open();
    await expect(saveCalibrationReport(ports, report({ name: 'scope-judge', version: 'aaaaaaaaaaaa' }, { estimate: 0.8, low: 0.7 }))).rejects.toBeInstanceOf(JudgeNotFoundError);
    const { ref } = await registerJudge(ports, definition());
    const first = report(ref, { estimate: 0.6, low: 0.5 }, { createdAt: '2026-12-01T00:00:00.000Z' });
    expect((await saveCalibrationReport(ports, first)).created).toBe(true);
    expect((await saveCalibrationReport(ports, first)).created).toBe(false);
    await saveCalibrationReport(ports, report(ref, { estimate: 0.7, low: 0.6 }, { createdAt: '2026-12-02T00:00:00.000Z' }));
    const listed = await listCalibrations(ports, 'scope-judge', { version: ref.version });
    expect(listed.items.map((r) => r.createdAt)).toEqual(['2026-12-02T00:00:00.000Z', '2026-12-01T00:00:00.000Z']);
    expect((await getJudge(ports, 'scope-judge')).versions[0]!.latestCalibration).toMatchObject({ createdAt: '2026-12-02T00:00:00.000Z', goldSet: 'gold-scope' });
    await expect(saveCalibrationReport(ports, { ...first, criteria: 'none' } as never)).rejects.toMatchObject({ issues: [{ path: 'criteria' }] });
    await expect(getJudge(ports, 'nobody')).rejects.toBeInstanceOf(JudgeNotFoundError);
  });
});

/**
 * A records view whose conditional writes of a judge head wait until `parties` of them have arrived: every racer
 * has read the head before any writes it.
 */
function barrierOnHeadWrites(records: RecordsPort, parties: number): RecordsPort {
  let arrived = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  return {
    put: async (item: RecordItem, options?: PutOptions) => {
      if (item.sk === 'HEAD' && options?.condition?.kind === 'unchanged') {
        if (++arrived >= parties) open();
        await gate;
      }
      return records.put(item, options);
    },
    putMany: (items) => records.putMany(items),
    get: (pk, sk) => records.get(pk, sk),
    query: (input) => records.query(input),
    delete: (pk, sk) => records.delete(pk, sk),
  };
}
