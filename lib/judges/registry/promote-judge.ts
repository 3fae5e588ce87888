import { ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { decideAcceptance } from '../calibration/acceptance-rule.ts';
import { JUDGE_DEMOTED, JUDGE_PROMOTED } from '../events.ts';
import { judgeRefString, type JudgeRef } from '../judge-identity.ts';
import type { AcceptanceDecision } from '../schemas.ts';
import { latestCalibration } from './calibrations.ts';
import {
  HEAD_WRITE_ATTEMPTS,
  readHead,
  requireHead,
  requireVersionForUpdate,
  toRef,
  withEffectiveStatus,
  writeHeadOver,
  writeVersionOver,
  type JudgeRefInput,
  type VersionRead,
} from './judge-store.ts';
import type { JudgeDemotedDetail, JudgePromotedDetail } from './registry-events.ts';
import { JudgePromotionConflictError, JudgePromotionRefusedError, JudgeRetiredError } from './registry-errors.ts';
import type { JudgeHead, JudgeVersionRecord } from './schemas.ts';

type RegistryPorts = Pick<Ports, 'records' | 'events' | 'now'>;

export interface PromoteOptions {
  /** Who promotes (an admin's name or key id). */
  by: string;
  /** Promote even though the acceptance rule refuses (admin only): `reason` is then required, and recorded. */
  force?: boolean;
  reason?: string;
}

export interface PromoteResult {
  judge: JudgeVersionRecord;
  /** False when the version already was the promoted one. */
  changed: boolean;
  /** What the acceptance rule said (recorded even when forced past a refusal). */
  decision: AcceptanceDecision;
  /** The version it replaced. */
  previous?: JudgeRef;
}

/**
 * Promotes one version of a judge: from then on its bare name resolves to it. Gated: the version's latest
 * calibration report must pass the judge's acceptance rule (`decideAcceptance`) against the incumbent's latest report
 * (a `JudgePromotionRefusedError`, 409, says why: no report, a kappa lower bound under the threshold, worse than the
 * incumbent, not cheaper). `force: true` with a `reason` overrides a refusal; both are recorded on the version and in
 * the event. One promoted version per name at a time: the head is written conditionally on the revision that was
 * read, so of two concurrent promotions one wins and the other gets `JudgePromotionConflictError` (409). The version it
 * replaces becomes `demoted`. Publishes `judge.promoted`. Promoting the promoted version again changes nothing.
 * Version records are written conditionally too (on a revision kept beside the record), so a retirement racing a
 * promotion always wins: the version ends retired and not promoted, and the promotion gets `JudgeRetiredError`.
 *
 * @example
 * const { judge, decision, previous } = await promoteJudge(ports, 'scope-judge@3f2a9c0d1e2b', { by: 'ana' });
 * await promoteJudge(ports, 'scope-judge@77aa00bb11cc', { by: 'ana', force: true, reason: 'gold set too small; reviewed by hand' });
 */
export async function promoteJudge(ports: RegistryPorts, refInput: JudgeRefInput, options: PromoteOptions): Promise<PromoteResult> {
  const ref = toRef(refInput, true);
  if (options.force && !options.reason?.trim()) {
    throw new ValidationError('A forced promotion needs a reason', [{ path: 'reason', message: 'required with force' }]);
  }
  const records = ports.records;
  let head = await requireHead(records, ref.name);
  const firstPromoted = head.promoted;
  for (let attempt = 1; ; attempt++) {
    // Read after the head: a retirement writes the version first and then moves the head, so a promotion that read
    // the version before it was retired loses its head write (or is undone by the retirement's head write).
    const read = await requireVersionForUpdate(records, ref);
    const version = read.record;
    if (version.status === 'retired') throw new JudgeRetiredError(judgeRefString(ref));
    const candidate = await latestCalibration(ports, ref);
    if (head.promoted === ref.version) {
      const decision = version.promotion?.decision ?? { accepted: true, reasons: [] };
      return { judge: withEffectiveStatus(version, head), changed: false, decision };
    }
    const incumbentRef = head.promoted ? { name: ref.name, version: head.promoted } : undefined;
    const incumbent = incumbentRef ? await latestCalibration(ports, incumbentRef) : undefined;
    const decision: AcceptanceDecision = candidate
      ? decideAcceptance(candidate, incumbent, head.acceptanceRule, {
          ...(candidate.costPerVerdictUsd !== undefined ? { candidate: candidate.costPerVerdictUsd } : {}),
          ...(incumbent?.costPerVerdictUsd !== undefined ? { incumbent: incumbent.costPerVerdictUsd } : {}),
        })
      : { accepted: false, reasons: [`no calibration report of ${judgeRefString(ref)}: calibrate it on a gold set first`] };
    if (!decision.accepted && !options.force) throw new JudgePromotionRefusedError(judgeRefString(ref), decision.reasons);

    const at = ports.now().toISOString();
    const won = await writeHeadOver(records, head, { ...head, promoted: ref.version, promotedAt: at, updatedAt: at });
    if (!won) {
      const again = await readHead(records, ref.name);
      // Someone else promoted or demoted meanwhile: their decision stands; this caller decides again on what is now.
      const same = again?.promoted === ref.version; // the same promotion by another request: answered unchanged
      if (!again || (!same && again.promoted !== firstPromoted) || attempt >= HEAD_WRITE_ATTEMPTS) throw new JudgePromotionConflictError(ref.name);
      head = again;
      continue;
    }
    const promoted: JudgeVersionRecord = {
      ...version,
      status: 'promoted',
      promotion: {
        at,
        by: options.by,
        forced: !decision.accepted,
        ...(options.reason ? { reason: options.reason } : {}),
        decision,
        ...(candidate ? { calibrationId: candidate.id } : {}),
        ...(incumbentRef ? { replaced: incumbentRef.version } : {}),
      },
    };
    if (!(await writeVersionOver(records, read, promoted))) {
      // Changed since it was read: retired (the retirement clears the head too; clearing it here as well is harmless)
      // or demoted by another request. Its decision stands.
      const now = await requireVersionForUpdate(records, ref);
      if (now.record.status === 'retired') {
        await unpromote(records, ref, at);
        throw new JudgeRetiredError(judgeRefString(ref));
      }
      throw new JudgePromotionConflictError(ref.name);
    }
    if (incumbentRef) {
      await updateVersion(records, incumbentRef, (old) =>
        old.status === 'promoted' ? { ...old, status: 'demoted', demotion: { at, reason: `superseded by ${judgeRefString(ref)}`, by: options.by } } : undefined,
      );
    }
    const detail: JudgePromotedDetail = {
      judge: ref,
      ...(incumbentRef ? { previous: incumbentRef } : {}),
      by: options.by,
      forced: !decision.accepted,
      ...(options.reason ? { reason: options.reason } : {}),
      decision,
      at,
    };
    await ports.events.publish([{ type: JUDGE_PROMOTED, id: `${JUDGE_PROMOTED}:${judgeRefString(ref)}:${at}`, detail }]);
    return { judge: promoted, changed: true, decision, ...(incumbentRef ? { previous: incumbentRef } : {}) };
  }
}

export interface StatusChangeResult {
  judge: JudgeVersionRecord;
  /** False when nothing changed (not promoted, or already retired). */
  changed: boolean;
}

/**
 * Writes `change(record)` over a version record conditionally on the revision read, reading again and deciding again
 * when another writer got there first; `change` returning undefined leaves the record as it is. Returns what was
 * written (undefined: nothing).
 */
async function updateVersion(
  records: RegistryPorts['records'],
  ref: JudgeRef,
  change: (record: JudgeVersionRecord) => JudgeVersionRecord | undefined,
): Promise<{ written?: JudgeVersionRecord; read: VersionRead }> {
  for (let attempt = 1; ; attempt++) {
    const read = await requireVersionForUpdate(records, ref);
    const next = change(read.record);
    if (!next) return { read };
    if (await writeVersionOver(records, read, next)) return { written: next, read };
    if (attempt >= HEAD_WRITE_ATTEMPTS) throw new JudgePromotionConflictError(ref.name);
  }
}

/**
 * Clears the head's promoted version if it is `ref` (conditional on the head's revision, read again on a lost race).
 * Returns the head as it is after.
 */
async function unpromote(records: RegistryPorts['records'], ref: JudgeRef, at: string, options: { bump?: boolean } = {}): Promise<{ head: JudgeHead; wasPromoted: boolean }> {
  let head = await requireHead(records, ref.name);
  for (let attempt = 1; ; attempt++) {
    if (head.promoted !== ref.version) {
      // `bump`: a new revision all the same, so a writer that read the head before this call decides again.
      if (!options.bump || (await writeHeadOver(records, head, { ...head, updatedAt: head.updatedAt }))) return { head, wasPromoted: false };
      if (attempt >= HEAD_WRITE_ATTEMPTS) throw new JudgePromotionConflictError(ref.name);
      head = await requireHead(records, ref.name);
      continue;
    }
    const { promoted: _p, promotedAt: _pa, ...rest } = head;
    if (await writeHeadOver(records, head, { ...rest, updatedAt: at })) return { head: await requireHead(records, ref.name), wasPromoted: true };
    if (attempt >= HEAD_WRITE_ATTEMPTS) throw new JudgePromotionConflictError(ref.name);
    head = await requireHead(records, ref.name);
  }
}

/**
 * Demotes a judge's promoted version (`name@version`, or a bare name for whichever is promoted): its bare name then
 * resolves to nothing until another version is promoted. What the drift watch calls when agreement with people drops.
 * Publishes `judge.demoted`. A version that is not promoted is left as it is (`changed: false`). Of concurrent
 * demotions exactly one clears the head, reports `changed: true` and publishes (so the drift alert goes out once).
 *
 * @example
 * await demoteJudge(ports, 'failure-mode@3f2a9c0d1e2b', 'kappa 0.41 over the last 200 verdicts, under 0.6', { by: 'drift-watch' });
 */
export async function demoteJudge(ports: RegistryPorts, refInput: JudgeRefInput, reason: string, options: { by?: string } = {}): Promise<StatusChangeResult> {
  if (!reason.trim()) throw new ValidationError('A demotion needs a reason', [{ path: 'reason', message: 'required' }]);
  const named = toRef(refInput);
  let version = named.version;
  if (version === undefined) {
    const head = await requireHead(ports.records, named.name);
    if (!head.promoted) throw new ValidationError(`Judge ${named.name} has no promoted version to demote`, [{ path: 'version', message: 'nothing promoted' }]);
    version = head.promoted;
  }
  const ref = { name: named.name, version };
  await requireVersionForUpdate(ports.records, ref);
  const at = ports.now().toISOString();
  const { head, wasPromoted } = await unpromote(ports.records, ref, at);
  // The record follows the head: marked demoted when this call cleared the head, or when it was left `promoted` by a
  // crash; never over a retirement or another demotion that got there first.
  const demotion = { at, reason, ...(options.by ? { by: options.by } : {}) };
  const { written, read } = await updateVersion(ports.records, ref, (record) =>
    record.status === 'promoted' || (wasPromoted && record.status !== 'retired' && record.status !== 'demoted') ? { ...record, status: 'demoted', demotion } : undefined,
  );
  if (wasPromoted) {
    const detail: JudgeDemotedDetail = { judge: ref, reason, ...(options.by ? { by: options.by } : {}), retired: false, at };
    await ports.events.publish([{ type: JUDGE_DEMOTED, id: `${JUDGE_DEMOTED}:${judgeRefString(ref)}:${at}`, detail }]);
  }
  // Only the call that cleared the head changed anything: of concurrent demotions one reports it (one drift alert).
  return { judge: written ?? withEffectiveStatus(read.record, head), changed: wasPromoted };
}

/**
 * Retires a version: it will never be promoted again (register a changed definition for a new version). Retiring the
 * promoted version also demotes it (and publishes `judge.demoted`, `retired: true`). Idempotent: a retired version
 * stays as it was (`changed: false`). The version is written retired first, then the head moves (cleared, or a new
 * revision), so a promotion that read the version before it was retired cannot leave it promoted.
 *
 * @example
 * await retireJudge(ports, 'scope-judge@3f2a9c0d1e2b', { reason: 'replaced by the distilled judge', by: 'ana' });
 */
export async function retireJudge(ports: RegistryPorts, refInput: JudgeRefInput, options: { reason?: string; by?: string } = {}): Promise<StatusChangeResult> {
  const ref = toRef(refInput, true);
  const at = ports.now().toISOString();
  const reason = options.reason?.trim() || 'retired';
  // The version first (conditionally: a concurrent promotion's version write cannot overwrite it, nor it that one),
  // then the head: cleared when it names this version, else moved to a new revision, so a promotion that read the
  // version before it was retired loses its head write and reads again.
  const { written, read } = await updateVersion(ports.records, ref, (record) =>
    record.status === 'retired' ? undefined : { ...record, status: 'retired', retirement: { at, reason, ...(options.by ? { by: options.by } : {}) } },
  );
  if (!written) return { judge: read.record, changed: false };
  const { wasPromoted } = await unpromote(ports.records, ref, at, { bump: true });
  let retired = written;
  if (wasPromoted) {
    const demotion = { at, reason: `retired: ${reason}`, ...(options.by ? { by: options.by } : {}) };
    retired = (await updateVersion(ports.records, ref, (record) => (record.status === 'retired' && record.demotion?.at !== at ? { ...record, demotion } : undefined))).written ?? retired;
  }
  if (wasPromoted) {
    const detail: JudgeDemotedDetail = { judge: ref, reason: `retired: ${reason}`, ...(options.by ? { by: options.by } : {}), retired: true, at };
    await ports.events.publish([{ type: JUDGE_DEMOTED, id: `${JUDGE_DEMOTED}:${judgeRefString(ref)}:${at}`, detail }]);
  }
  return { judge: retired, changed: true };
}
