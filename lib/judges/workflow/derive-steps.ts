/**
 * The steps of a judge derivation (`derive-judges.asl.ts`): plain functions of ports, each one Lambda on AWS
 * (`functions/judges/derive-step.ts`) and one local handler under `npm start`. States carry names and keys, never
 * bodies; each step reads and writes the derivation's records, so a step run again (a retry, a resumed execution)
 * finds what it did and does it once.
 *
 * ```
 * plan-derivation → per judge name: calibrate-prompted → collect-teacher → [trainer job] → calibrate-distilled → decide-promotion
 *                                   (any error → record-judge-failure)
 *                 → report-derivation (record + report.json blob, notice to people)
 * ```
 *
 * - plan-derivation: the top checkpoint's endpoint; every promoted judge of a kind this deployment can run that has a
 *   gold set (`GoldSet.judge`) with labelled items is derived. Others are listed as skipped, with why. An incumbent
 *   whose model has no price (`settings.pricing`, the stage's `judges.pricing`) is derived but warned about up front:
 *   `no price for <model>: a derived judge cannot be shown cheaper`.
 * - calibrate-prompted: registers the prompted judge made from the top model (the incumbent's definition, prompt,
 *   rubric and output schema, with `model` = the checkpoint's endpoint and `derivedFrom.checkpoint`), calibrates the
 *   incumbent on the gold set when it has no report there, then the candidate, capturing its labels on the gold items.
 * - collect-teacher: the teacher's labels on unlabelled production items of the gold items' subject kind (the
 *   annotation queues' `production-sample` items, gold subjects left out), as a JSON Lines training set and a held-out
 *   part, and the trainer job's name (`trainerJobName`). The gold items are never trained on: the student is
 *   calibrated against people on all of them, items it has not seen.
 * - the trainer job (Batch; locally a child process) writes the reward model under the derivation's `model/` prefix.
 * - calibrate-distilled: registers the reward model as the judge `<name>-distilled` (kind `reward-model`,
 *   `derivedFrom.teacher` = the prompted judge), measures it against its teacher on the held-out items and against
 *   people on the gold set.
 * - decide-promotion: each candidate against the incumbent's report on the same gold set with the judge's acceptance
 *   rule and `requireCheaper`; an accepted one is promoted (`promoteJudge`).
 *
 * @example
 * const out = await deriveSteps['plan-derivation'](ports, { derivationId: 'derive-ckpt-1a2b3c4d', checkpointId: 'coder-7b:step-1200' });
 */
import { executionNameFor } from '../../shared/execution-name.ts';
import { createHash } from 'node:crypto';
import { ValidationError } from '../../errors.ts';
import { beatQuietly } from '../../people/heartbeats/record-heartbeat.ts';
import { noticeNotifier } from '../../people/notices/notice-notifier.ts';
import type { Notice } from '../../people/notify.ts';
import type { Ports } from '../../ports/ports.ts';
import { findCheckpoint } from '../../registry/get-checkpoint.ts';
import { forEachLimited } from '../../shared/for-each-limited.ts';
import { inFraction } from '../annotation/annotation-item.ts';
import { listAllAnnotations } from '../annotation/annotation-queue.ts';
import { listGoldSets, readGoldItems } from '../annotation/gold-sets.ts';
import { calibrateJudge } from '../calibrate-judge.ts';
import { decideAcceptance } from '../calibration/acceptance-rule.ts';
import { cohenKappa } from '../calibration/agreement.ts';
import { judgeRefString, type JudgeDefinition, type JudgeRef } from '../judge-identity.ts';
import { listCalibrations } from '../registry/calibrations.ts';
import { readHead, requireVersion } from '../registry/judge-store.ts';
import { promoteJudge } from '../registry/promote-judge.ts';
import { listJudges } from '../registry/read-judges.ts';
import { registerJudge } from '../registry/register-judge.ts';
import type { CalibrationReport, JudgeLabels, JudgeRunner, Subject } from '../schemas.ts';
import { hasPrice, REWARD_MODEL_PREFIX, targetOf, type DeriveSettings, type JudgeRunners } from '../derive/judge-runners.ts';
import { derivationJudgeRecord, derivationRecord } from '../derive/record-codecs.ts';
import { derivationBlobs, derivationKeys } from '../derive/record-keys.ts';
import type { Derivation, DerivationJudge, DerivationReport, PeopleAgreement, TeacherAgreement } from '../derive/schemas.ts';

export const DERIVE_STEP_NAMES = ['plan-derivation', 'calibrate-prompted', 'collect-teacher', 'calibrate-distilled', 'decide-promotion', 'record-judge-failure', 'report-derivation'] as const;
export type DeriveStepName = (typeof DERIVE_STEP_NAMES)[number];

/** The suffix of a distilled judge's name (`<name>-distilled`, a `reward-model` judge of its own). */
export const DISTILLED_SUFFIX = '-distilled';
/** Who promotions made by a derivation are recorded as. */
export const derivedBy = (derivationId: string) => `derivation:${derivationId}`;

export interface DeriveStepPorts extends Pick<Ports, 'records' | 'blobs' | 'events' | 'now'> {
  runners: JudgeRunners;
  settings: DeriveSettings;
  /** Telling people; default `raiseNotice` (`lib/people/notices/`: stored once per derivation, then Slack and the bus). */
  notify?: (notice: Notice) => Promise<unknown>;
}

interface JudgeStep {
  derivationId: string;
  name: string;
}

/** What the trainer job needs (the state passes it to the Batch task's environment). */
export interface TrainerJobInput {
  /** The Batch job name (`trainerJobName`). */
  jobName: string;
  trainDataKey: string;
  modelKey: string;
  rewardKind: 'pointwise' | 'pairwise';
  seed: string;
  epochs: string;
}

/** Input and output of each step (the definition selects fields of these). */
export interface DeriveStepIo {
  'plan-derivation': [{ derivationId: string; checkpointId: string }, { derivationId: string; judges: JudgeStep[]; skipped: number }];
  'calibrate-prompted': [JudgeStep, { name: string; prompted: string; calibrationId: string }];
  'collect-teacher': [JudgeStep, { name: string; examples: number; trainer: TrainerJobInput }];
  'calibrate-distilled': [JudgeStep, { name: string; distilled: string; calibrationId: string }];
  'decide-promotion': [JudgeStep, { name: string; promoted: string[] }];
  'record-judge-failure': [JudgeStep & { error: { Error?: string; Cause?: string } }, { name: string; failed: true }];
  'report-derivation': [{ derivationId: string }, { derivationId: string; reportKey: string; promoted: string[] }];
}

export type DeriveSteps = { [K in DeriveStepName]: (ports: DeriveStepPorts, input: DeriveStepIo[K][0]) => Promise<DeriveStepIo[K][1]> };

/** The derivation id of a top checkpoint: `derive-<slug>-<8 hex>` (an execution name: letters, digits, - and _). */
export function derivationIdOf(checkpointId: string): string {
  return executionNameFor('derive', checkpointId, 60);
}

/** Batch job names: letters, digits, `-` and `_`, at most 128. */
export const BATCH_JOB_NAME_MAX = 128;

/**
 * The trainer job's Batch name for a derivation's judge: `<derivationId>-<name>` with every other character as `-`,
 * cut to fit 128 with an 8-hex hash of the pair, so two judges whose names differ only in such characters (`a.b`,
 * `a:b`) or after the cut get different names.
 *
 * @example
 * trainerJobName('derive-top-1-1a2b3c4d', 'fm.judge'); // 'derive-top-1-1a2b3c4d-fm-judge-<8 hex>'
 */
export function trainerJobName(derivationId: string, name: string): string {
  const hash = createHash('sha256').update(`${derivationId}\n${name}`).digest('hex').slice(0, 8);
  const readable = `${derivationId}-${name}`.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, BATCH_JOB_NAME_MAX - hash.length - 1);
  return `${readable}-${hash}`;
}

/** Whether a verdict of `model` has a known cost: a price in the settings, or one its report on `goldSet` measured. */
async function costKnown(ports: DeriveStepPorts, ref: JudgeRef, model: string, goldSet: string): Promise<boolean> {
  if (hasPrice(ports.settings, model)) return true;
  return (await reportOn(ports, ref, goldSet))?.costPerVerdictUsd !== undefined;
}

async function readPart(ports: Pick<Ports, 'records'>, derivationId: string, name: string): Promise<DerivationJudge> {
  const key = derivationKeys.judge(derivationId, name);
  const part = derivationJudgeRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  if (!part) throw new ValidationError(`Derivation ${derivationId} has no judge ${name}`, [{ path: 'name', message: 'not planned' }]);
  return part;
}

async function writePart(ports: Pick<Ports, 'records' | 'now'>, part: DerivationJudge): Promise<DerivationJudge> {
  const next = { ...part, updatedAt: ports.now().toISOString() };
  await ports.records.put(derivationJudgeRecord.encode(next));
  return next;
}

function peopleOf(report: CalibrationReport): PeopleAgreement {
  return {
    calibrationId: report.id,
    goldSet: report.goldSet,
    criteria: report.criteria.map((c) => ({ id: c.id, n: c.n, kappa: c.kappa })),
    ...(report.costPerVerdictUsd !== undefined ? { costPerVerdictUsd: report.costPerVerdictUsd } : {}),
  };
}

/** The newest report of a version on a gold set. */
async function reportOn(ports: Pick<Ports, 'records'>, ref: JudgeRef, goldSet: string): Promise<CalibrationReport | undefined> {
  let cursor: string | undefined;
  do {
    const page = await listCalibrations(ports, ref.name, { version: ref.version, limit: 200, ...(cursor ? { cursor } : {}) });
    const found = page.items.find((r) => r.goldSet === goldSet);
    if (found) return found;
    cursor = page.cursor;
  } while (cursor);
  return undefined;
}

function runnerOrThrow(ports: DeriveStepPorts, def: JudgeDefinition): JudgeRunner {
  const run = ports.runners.runnerFor(def);
  if (!run) throw new ValidationError(`No runner for a ${def.kind} judge here`, [{ path: 'kind', message: 'no runner' }]);
  return run;
}

interface Captured {
  subject: Subject;
  labels: Record<string, string>;
}

function jsonl(rows: readonly unknown[]): string {
  return rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length > 0 ? '\n' : '');
}

function parseJsonl<T>(bytes: Uint8Array | undefined): T[] {
  if (!bytes) return [];
  return Buffer.from(bytes)
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

async function planDerivation(ports: DeriveStepPorts, input: DeriveStepIo['plan-derivation'][0]): Promise<DeriveStepIo['plan-derivation'][1]> {
  const { derivationId, checkpointId } = input;
  const checkpoint = await findCheckpoint(ports.records, checkpointId);
  if (!checkpoint) throw new ValidationError(`No checkpoint ${checkpointId}`, [{ path: 'checkpointId', message: 'not registered' }]);
  const key = derivationKeys.derivation(derivationId);
  const existing = derivationRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  const now = ports.now().toISOString();
  const model = checkpoint.serving.kind === 'endpoint' ? checkpoint.serving.model : undefined;
  const skipped: Array<{ name: string; reason: string }> = [];
  const warnings: NonNullable<Derivation['warnings']> = [];
  if (model && !hasPrice(ports.settings, model)) warnings.push({ name: checkpointId, message: `no price for ${model}: its prompted judges cannot be shown cheaper` });
  const planned: Array<{ name: string; goldSet: string }> = [];
  const goldSets = await listGoldSets(ports);
  let cursor: string | undefined;
  do {
    const page = await listJudges(ports, { limit: 200, ...(cursor ? { cursor } : {}) });
    for (const head of page.items) {
      if (head.kind === 'reward-model' || !head.promoted) continue;
      if (!model) {
        skipped.push({ name: head.name, reason: `checkpoint ${checkpointId} is served by vLLM inside jobs: it has no endpoint a judge can call` });
        continue;
      }
      const incumbent = await requireVersion(ports.records, { name: head.name, version: head.promoted });
      if (!ports.runners.runnerFor({ ...incumbent.definition, model })) {
        skipped.push({ name: head.name, reason: `no runner for ${head.kind} judges in this deployment` });
        continue;
      }
      let goldSet: string | undefined;
      for (const set of goldSets.filter((s) => s.judge === head.name)) {
        if ((await readGoldItems(ports, set.name)).length > 0) {
          goldSet = set.name;
          break;
        }
      }
      if (!goldSet) {
        skipped.push({ name: head.name, reason: 'no gold set with labelled items' });
        continue;
      }
      planned.push({ name: head.name, goldSet });
      // Promotion needs the candidate cheaper than the incumbent: an incumbent of unknown cost blocks every candidate.
      if (!(await costKnown(ports, { name: head.name, version: head.promoted }, incumbent.definition.model, goldSet))) {
        warnings.push({ name: head.name, message: `no price for ${incumbent.definition.model}: a derived judge cannot be shown cheaper` });
      }
      const partKey = derivationKeys.judge(derivationId, head.name);
      if (!(await ports.records.get(partKey.pk, partKey.sk))) {
        await writePart(ports, {
          kind: 'derivation-judge',
          derivationId,
          name: head.name,
          judgeKind: head.kind,
          goldSet,
          incumbent: { name: head.name, version: head.promoted },
          updatedAt: now,
        });
      }
    }
    cursor = page.cursor;
  } while (cursor);
  await ports.records.put(
    derivationRecord.encode({
      kind: 'derivation',
      derivationId,
      checkpointId,
      ...(model ? { model } : {}),
      judges: planned,
      skipped,
      ...(warnings.length > 0 ? { warnings } : {}),
      status: 'running',
      createdAt: existing?.createdAt ?? now,
    }),
  );
  return { derivationId, judges: planned.map((p) => ({ derivationId, name: p.name })), skipped: skipped.length };
}

async function calibratePrompted(ports: DeriveStepPorts, input: JudgeStep): Promise<DeriveStepIo['calibrate-prompted'][1]> {
  const part = await readPart(ports, input.derivationId, input.name);
  const key = derivationKeys.derivation(input.derivationId);
  const derivation = derivationRecord.decode((await ports.records.get(key.pk, key.sk))!);
  if (!part.incumbent || !derivation.model) throw new ValidationError(`Judge ${input.name} has no incumbent or the checkpoint no endpoint`, [{ path: 'name', message: 'not derivable' }]);
  const incumbent = await requireVersion(ports.records, part.incumbent);
  const { ref } = await registerJudge(ports, {
    ...incumbent.definition,
    model: derivation.model,
    derivedFrom: { checkpoint: derivation.checkpointId },
    description: `Prompted judge of ${derivation.checkpointId} (derivation ${input.derivationId}), from ${judgeRefString(part.incumbent)}`,
    by: derivedBy(input.derivationId),
  });
  const common = { goldSet: part.goldSet, concurrency: ports.settings.concurrency, ...(ports.settings.resamples ? { resamples: ports.settings.resamples } : {}) };
  // The incumbent is measured on the same gold set (once: a report there is reused).
  const incumbentReport =
    (await reportOn(ports, part.incumbent, part.goldSet)) ?? (await calibrateJudge(ports, { judge: part.incumbent, run: runnerOrThrow(ports, incumbent.definition), ...common }));
  // The candidate. Its verdicts on the gold items are not kept for training: the student is calibrated on those items.
  const teacher = runnerOrThrow(ports, (await requireVersion(ports.records, ref)).definition);
  const report = (await reportOn(ports, ref, part.goldSet)) ?? (await calibrateJudge(ports, { judge: ref, run: teacher, retestFraction: 0, ...common }));
  await writePart(ports, {
    ...part,
    incumbentPeople: peopleOf(incumbentReport),
    prompted: { ref, people: peopleOf(report), ...(report.costPerVerdictUsd !== undefined ? { costPerVerdictUsd: report.costPerVerdictUsd } : {}) },
  });
  return { name: input.name, prompted: judgeRefString(ref), calibrationId: report.id };
}

async function collectTeacher(ports: DeriveStepPorts, input: JudgeStep): Promise<DeriveStepIo['collect-teacher'][1]> {
  const part = await readPart(ports, input.derivationId, input.name);
  if (!part.prompted) throw new ValidationError(`Judge ${input.name}: the prompted judge is not calibrated yet`, [{ path: 'name', message: 'calibrate-prompted first' }]);
  const teacher = runnerOrThrow(ports, (await requireVersion(ports.records, part.prompted.ref)).definition);
  const goldItems = await readGoldItems(ports, part.goldSet);
  const kind = goldItems[0]?.subject.kind;
  // Gold subjects are left out of the training set: the student is calibrated against people on them.
  const known = new Set(goldItems.map((g) => JSON.stringify(g.subject)));
  const production: Subject[] = [];
  for (const status of ['pending', 'done'] as const) {
    for (const item of await listAllAnnotations(ports, { reason: 'production-sample', status })) {
      if (item.subject.kind !== kind || known.has(JSON.stringify(item.subject))) continue;
      known.add(JSON.stringify(item.subject));
      production.push(item.subject);
    }
  }
  const toJudge = production.slice(0, ports.settings.maxProductionItems);
  const judged: Captured[] = [];
  await forEachLimited(toJudge, ports.settings.concurrency, async (subject) => {
    try {
      judged.push({ subject, labels: (await teacher(subject)).labels });
    } catch {
      // A verdict the teacher could not give is left out of the training set.
    }
  });
  const all = judged.sort((a, b) => JSON.stringify(a.subject).localeCompare(JSON.stringify(b.subject)));
  const rewardKind = kind === 'pair' ? 'pairwise' : 'pointwise';
  const labelIds = new Set(goldItems.flatMap((g) => Object.keys(g.labels)));
  const rows: Array<{ row: Record<string, unknown>; holdout: boolean }> = [];
  for (const c of all) {
    const text = await ports.runners.textOf(c.subject);
    const id = JSON.stringify(c.subject);
    const holdout = inFraction(`${ports.settings.seed}\n${id}`, ports.settings.holdoutFraction);
    if (rewardKind === 'pairwise') {
      const target = targetOf('preference', c.labels['preference'] ?? '');
      if (target === undefined || typeof text === 'string') continue;
      rows.push({ row: { id, a: text.a, b: text.b, target }, holdout });
    } else {
      const targets = Object.fromEntries(
        Object.entries(c.labels)
          .filter(([label]) => labelIds.has(label))
          .map(([label, value]) => [label, targetOf(label, value)] as const)
          .filter((e): e is readonly [string, number] => e[1] !== undefined),
      );
      if (Object.keys(targets).length === 0 || typeof text !== 'string') continue;
      rows.push({ row: { id, subject: c.subject, text, targets }, holdout });
    }
  }
  const train = rows.filter((r) => !r.holdout).map((r) => r.row);
  const holdout = rows.filter((r) => r.holdout).map((r) => r.row);
  if (train.length === 0) {
    throw new ValidationError(`Judge ${input.name}: the teacher gave no verdict on unlabelled production items to learn from (gold items are kept for calibration)`, [
      { path: 'teacher', message: `no training items among ${production.length} production-sample items` },
    ]);
  }
  await ports.blobs.put(derivationBlobs.teacher(input.derivationId, input.name), jsonl(train), { contentType: 'application/x-ndjson' });
  await ports.blobs.put(derivationBlobs.holdout(input.derivationId, input.name), jsonl(holdout), { contentType: 'application/x-ndjson' });
  await writePart(ports, { ...part, studentKind: rewardKind, teacherItems: { gold: goldItems.length, production: toJudge.length, train: train.length, holdout: holdout.length } });
  return {
    name: input.name,
    examples: train.length,
    trainer: {
      jobName: trainerJobName(input.derivationId, input.name),
      trainDataKey: derivationBlobs.teacher(input.derivationId, input.name),
      modelKey: derivationBlobs.model(input.derivationId, input.name),
      rewardKind,
      seed: String(ports.settings.seed),
      epochs: String(ports.settings.epochs),
    },
  };
}

async function calibrateDistilled(ports: DeriveStepPorts, input: JudgeStep): Promise<DeriveStepIo['calibrate-distilled'][1]> {
  const part = await readPart(ports, input.derivationId, input.name);
  if (!part.prompted || !part.incumbent) throw new ValidationError(`Judge ${input.name}: no teacher yet`, [{ path: 'name', message: 'collect-teacher first' }]);
  const key = derivationKeys.derivation(input.derivationId);
  const derivation = derivationRecord.decode((await ports.records.get(key.pk, key.sk))!);
  const teacherVersion = await requireVersion(ports.records, part.prompted.ref);
  const sourceHead = await readHead(ports.records, input.name);
  const modelKey = derivationBlobs.model(input.derivationId, input.name);
  const { ref } = await registerJudge(ports, {
    name: `${input.name}${DISTILLED_SUFFIX}`,
    kind: 'reward-model',
    model: `${REWARD_MODEL_PREFIX}${modelKey}`,
    prompt: '',
    rubric: teacherVersion.definition.rubric,
    ...(teacherVersion.definition.taxonomyVersion !== undefined ? { taxonomyVersion: teacherVersion.definition.taxonomyVersion } : {}),
    derivedFrom: { checkpoint: derivation.checkpointId, teacher: judgeRefString(part.prompted.ref) },
    description: `Reward model distilled from ${judgeRefString(part.prompted.ref)} (derivation ${input.derivationId})`,
    // Its own promotions are gated like the judge it stands in for; cost is checked against that judge's incumbent.
    ...(sourceHead ? { acceptanceRule: { ...sourceHead.acceptanceRule, requireCheaper: false } } : {}),
    by: derivedBy(input.derivationId),
  });
  const student = runnerOrThrow(ports, (await requireVersion(ports.records, ref)).definition);
  const report =
    (await reportOn(ports, ref, part.goldSet)) ??
    (await calibrateJudge(ports, { judge: ref, goldSet: part.goldSet, run: student, concurrency: ports.settings.concurrency, ...(ports.settings.resamples ? { resamples: ports.settings.resamples } : {}) }));
  const teacher = await teacherAgreement(ports, input, student);
  await writePart(ports, {
    ...part,
    distilled: {
      ref,
      people: peopleOf(report),
      teacher,
      ...(part.teacherItems ? { trainedOn: part.teacherItems.train } : {}),
      calibratedOn: Math.max(0, ...report.criteria.map((c) => c.n)),
      ...(report.costPerVerdictUsd !== undefined ? { costPerVerdictUsd: report.costPerVerdictUsd } : {}),
    },
  });
  return { name: input.name, distilled: judgeRefString(ref), calibrationId: report.id };
}

/** The student against its teacher on the held-out teacher verdicts (the training items when none were held out). */
async function teacherAgreement(ports: DeriveStepPorts, input: JudgeStep, student: JudgeRunner): Promise<TeacherAgreement> {
  type Row = { id: string; subject?: Subject; targets?: Record<string, number>; a?: string; b?: string; target?: number };
  let rows = parseJsonl<Row>(await ports.blobs.get(derivationBlobs.holdout(input.derivationId, input.name)));
  const inSample = rows.length === 0;
  if (inSample) rows = parseJsonl<Row>(await ports.blobs.get(derivationBlobs.teacher(input.derivationId, input.name)));
  const pairs = new Map<string, { teacher: string[]; student: string[] }>();
  for (const row of rows) {
    const subject = row.subject ?? (JSON.parse(row.id) as Subject);
    let labels: JudgeLabels;
    try {
      labels = await student(subject);
    } catch {
      continue;
    }
    const teacherLabels: Record<string, number> = row.targets ?? (row.target !== undefined ? { preference: row.target } : {});
    for (const [label, target] of Object.entries(teacherLabels)) {
      const said = labels.labels[label];
      if (said === undefined) continue;
      const entry = pairs.get(label) ?? { teacher: [], student: [] };
      entry.teacher.push(label === 'preference' ? (target > 0.5 ? 'a' : target < 0.5 ? 'b' : 'tie') : target >= 0.5 ? 'positive' : 'negative');
      entry.student.push(label === 'preference' ? said : targetOf(label, said) === 1 ? 'positive' : 'negative');
      pairs.set(label, entry);
    }
  }
  return {
    n: rows.length,
    inSample,
    labels: [...pairs.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([id, p]) => ({
        id,
        n: p.teacher.length,
        agreement: p.teacher.length > 0 ? p.teacher.filter((t, i) => t === p.student[i]).length / p.teacher.length : null,
        kappa: cohenKappa(p.teacher, p.student),
      })),
  };
}

async function decidePromotion(ports: DeriveStepPorts, input: JudgeStep): Promise<DeriveStepIo['decide-promotion'][1]> {
  let part = await readPart(ports, input.derivationId, input.name);
  if (!part.incumbent) throw new ValidationError(`Judge ${input.name} has no incumbent`, [{ path: 'name', message: 'no incumbent' }]);
  const head = await readHead(ports.records, input.name);
  const rule = { ...(head?.acceptanceRule ?? { minKappaLower: 0.6, maxKappaDrop: 0, minItems: 30 }), requireCheaper: true };
  // Both candidates are held to the incumbent as it was before this derivation promoted anything.
  const incumbentReport = part.incumbentPeople ? await reportOn(ports, part.incumbent, part.goldSet) : undefined;
  const promoted: string[] = [];
  for (const which of ['prompted', 'distilled'] as const) {
    const candidate = part[which];
    if (!candidate || candidate.decision) {
      if (candidate?.decision?.promoted) promoted.push(judgeRefString(candidate.ref));
      continue;
    }
    const report = await reportOn(ports, candidate.ref, part.goldSet);
    const decision = report ? decideAcceptance(report, incumbentReport, rule) : { accepted: false, reasons: ['no calibration report'] };
    let outcome: { promoted: boolean; note?: string } = { promoted: false };
    if (decision.accepted) {
      try {
        await promoteJudge(ports, candidate.ref, { by: derivedBy(input.derivationId) });
        outcome = { promoted: true };
        promoted.push(judgeRefString(candidate.ref));
      } catch (error) {
        // The registry's own gate (the name's rule, against its own incumbent) has the last word.
        outcome = { promoted: false, note: `the registry refused: ${error instanceof Error ? error.message : String(error)}` };
      }
    }
    part = await writePart(ports, { ...part, [which]: { ...candidate, decision: { ...decision, ...outcome } } });
  }
  return { name: input.name, promoted };
}

async function recordJudgeFailure(ports: DeriveStepPorts, input: DeriveStepIo['record-judge-failure'][0]): Promise<DeriveStepIo['record-judge-failure'][1]> {
  const part = await readPart(ports, input.derivationId, input.name);
  await writePart(ports, { ...part, failed: { error: input.error.Error ?? 'Error', cause: (input.error.Cause ?? '').slice(0, 2000) } });
  return { name: input.name, failed: true };
}

async function reportDerivation(ports: DeriveStepPorts, input: { derivationId: string }): Promise<DeriveStepIo['report-derivation'][1]> {
  const key = derivationKeys.derivation(input.derivationId);
  const derivation = derivationRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  if (!derivation) throw new ValidationError(`No derivation ${input.derivationId}`, [{ path: 'derivationId', message: 'not planned' }]);
  const page = await ports.records.query({ partition: derivationKeys.partition(input.derivationId), sort: { beginsWith: derivationKeys.judgePrefix }, limit: 1000 });
  const parts = page.items.map((i) => derivationJudgeRecord.decode(i));
  const promoted = parts.flatMap((p) => [p.prompted, p.distilled].filter((c) => c?.decision?.promoted).map((c) => c!.ref));
  const finishedAt = ports.now().toISOString();
  const reportKey = derivationBlobs.report(input.derivationId);
  const report: DerivationReport = {
    derivationId: derivation.derivationId,
    checkpointId: derivation.checkpointId,
    ...(derivation.model ? { model: derivation.model } : {}),
    createdAt: derivation.createdAt,
    finishedAt,
    ...(derivation.warnings ? { warnings: derivation.warnings } : {}),
    skipped: derivation.skipped,
    judges: parts.map(({ kind: _kind, ...p }) => p),
    promoted,
  };
  await ports.blobs.put(reportKey, `${JSON.stringify(report, null, 2)}\n`, { contentType: 'application/json' });
  await ports.records.put(derivationRecord.encode({ ...derivation, status: 'finished', finishedAt, reportKey, promoted }));
  const notify = ports.notify ?? noticeNotifier(ports, 'judges');
  await notify(derivationNotice(report));
  return { derivationId: input.derivationId, reportKey, promoted: promoted.map(judgeRefString) };
}

const fmt = (x: number | null | undefined, digits = 2) => (x === null || x === undefined ? 'n/a' : x.toFixed(digits));
const usd = (x: number | undefined) => (x === undefined ? 'unknown' : `$${x.toPrecision(2)}`);
const minKappa = (p: PeopleAgreement | undefined) => (p && p.criteria.length > 0 ? Math.min(...p.criteria.map((c) => c.kappa.estimate)) : undefined);

/** The notice people get: per judge name, each candidate against its teacher and against people, cost, decision. */
export function derivationNotice(report: DerivationReport): Notice {
  const lines: string[] = (report.warnings ?? []).map((w) => `warning ${w.name}: ${w.message}`);
  for (const j of report.judges) {
    lines.push(`*${j.name}* (gold set ${j.goldSet}; incumbent ${j.incumbent ? judgeRefString(j.incumbent) : 'none'}: kappa vs people ${fmt(minKappa(j.incumbentPeople))}, ${usd(j.incumbentPeople?.costPerVerdictUsd)}/verdict)`);
    if (j.failed) lines.push(`  failed: ${j.failed.error}: ${j.failed.cause.slice(0, 200)}`);
    for (const [label, c] of [['prompted', j.prompted], ['distilled', j.distilled]] as const) {
      if (!c) continue;
      const teacher = c.teacher ? `vs teacher: agreement ${c.teacher.labels.map((l) => `${l.id} ${fmt(l.agreement)} (kappa ${fmt(l.kappa)})`).join(', ')}${c.teacher.inSample ? ' in sample' : ''}` : 'it is the teacher';
      const items = c.trainedOn !== undefined || c.calibratedOn !== undefined ? `trained on ${c.trainedOn ?? 'n/a'} teacher verdicts, calibrated on ${c.calibratedOn ?? 'n/a'} gold items; ` : '';
      const verdict = c.decision ? (c.decision.promoted ? 'PROMOTED' : `not promoted: ${[...c.decision.reasons, c.decision.note].filter(Boolean).join('; ')}`) : 'undecided';
      lines.push(`  ${label} ${judgeRefString(c.ref)}: vs people kappa ${fmt(minKappa(c.people))}; ${teacher}; ${items}${usd(c.costPerVerdictUsd)}/verdict; ${verdict}`);
    }
  }
  for (const s of report.skipped) lines.push(`skipped ${s.name}: ${s.reason}`);
  const failed = report.judges.filter((j) => j.failed).length;
  return {
    id: `derivation:${report.derivationId}`,
    title: `Judge derivation from ${report.checkpointId}: ${report.promoted.length} promoted${failed ? `, ${failed} failed` : ''}`,
    text: (lines.join('\n') || 'No judge to derive.').slice(0, 3000),
    // A judge that failed to derive is a failure, reported once with its cause (above) and the link.
    kind: failed ? 'failure' : 'info',
    severity: failed ? 'warning' : 'info',
    link: `/jobs?run=${encodeURIComponent(report.derivationId)}`,
    source: { capability: 'judges', runKind: 'derivation', runId: report.derivationId },
    fields: { derivation: report.derivationId, judges: report.judges.length, promoted: report.promoted.map(judgeRefString).join(', ') || 'none' },
  };
}

/**
 * A step that beats for its derivation after it ran (`lib/people/heartbeats/`): a derivation whose steps stop
 * finishing is reported stalled after the stage's `derivation` window; the report ends the watch.
 */
function beating<K extends DeriveStepName>(name: K, step: DeriveSteps[K]): DeriveSteps[K] {
  return (async (ports: DeriveStepPorts, input: DeriveStepIo[K][0]) => {
    const out = await (step as (p: DeriveStepPorts, i: DeriveStepIo[K][0]) => Promise<DeriveStepIo[K][1]>)(ports, input);
    const finished = name === 'report-derivation';
    await beatQuietly(ports.records, { runKind: 'derivation', runId: input.derivationId, stage: name, ...(finished ? { finished } : {}) }, ports.now());
    return out;
  }) as DeriveSteps[K];
}

/** The steps by name (what the Lambda and the local workflow dispatch to). */
export const deriveSteps: DeriveSteps = {
  'plan-derivation': beating('plan-derivation', planDerivation),
  'calibrate-prompted': beating('calibrate-prompted', calibratePrompted),
  'collect-teacher': beating('collect-teacher', collectTeacher),
  'calibrate-distilled': beating('calibrate-distilled', calibrateDistilled),
  'decide-promotion': beating('decide-promotion', decidePromotion),
  'record-judge-failure': beating('record-judge-failure', recordJudgeFailure),
  'report-derivation': beating('report-derivation', reportDerivation),
};

/**
 * The one step Lambda's payload, `{ step, input }`, run by the step it names (`functions/judges/derive-step.ts`, and
 * the local workflow's handler). An unknown step is a `ValidationError` naming `step`.
 *
 * @example
 * await dispatchDeriveStep(ports, { step: 'report-derivation', input: { derivationId } });
 */
export async function dispatchDeriveStep(ports: DeriveStepPorts, payload: unknown): Promise<unknown> {
  const { step, input } = (payload ?? {}) as { step?: string; input?: unknown };
  if (!DERIVE_STEP_NAMES.includes(step as DeriveStepName)) throw new ValidationError(`unknown derivation step ${String(step)}`, [{ path: 'step', message: `one of ${DERIVE_STEP_NAMES.join(', ')}` }]);
  return deriveSteps[step as DeriveStepName](ports, input as never);
}
