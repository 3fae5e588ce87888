/**
 * The drift check of a judge: kappa between the judge and people on a rolling window of the newest (judge, person)
 * `production-sample` pairs of its promoted version (the unbiased sample of its verdicts, `watch-verdicts.ts`), per
 * label id, against the kappa of its latest calibration report. Disagreement pairs (queued because the user
 * disagreed) never enter the kappa — they are the judge's worst cases, and a sound judge's kappa over them is near 0 —
 * they are reported apart: how many of the newest `window`, and the share where the person sided with the user. A label whose
 * window kappa falls more than `maxDrop` below its calibration estimate (with at least `minN` pairs and a defined
 * kappa) is a drop: people are told (a notice, `lib/people/notices/`) and the version is demoted (the registry's
 * `demoteJudge`), once — a version already demoted is not demoted or announced again.
 *
 * Run after every label of a drift item (`labelAnnotationAndWatch`: one query of at most `window` pairs and one read
 * of the calibration report) and on demand (`POST /v1/judges/{name}/drift-check`, `flywheel annotate calibrate drift-check`).
 */
import { z } from 'zod';
import { ValidationError } from '../../errors.ts';
import type { AnnotationReason } from '../annotation/annotation-item.ts';
import { raiseNotice, type NoticeDeliveryOptions } from '../../people/notices/raise-notice.ts';
import type { Ports } from '../../ports/ports.ts';
import { toFieldIssues } from '../../shared/field-issues.ts';
import { detectDrop, rollingKappa, type LabelPair } from '../calibration/rolling-agreement.ts';
import { judgeRefString, parseJudgeRef, type JudgeRef } from '../judge-identity.ts';
import { latestCalibration } from '../registry/calibrations.ts';
import { demoteJudge } from '../registry/promote-judge.ts';
import { resolveJudge } from '../registry/read-judges.ts';
import { JudgeNotPromotedError } from '../registry/registry-errors.ts';
import { driftPairRecord, type DriftPair } from './record-codecs.ts';
import { driftKeys } from './record-keys.ts';

export const DriftCheckOptions = z.strictObject({
  /** Pairs in the rolling window (the newest). */
  window: z.coerce.number().int().min(1).max(1000).default(200),
  /** How far below the calibration estimate a window's kappa may fall. */
  maxDrop: z.coerce.number().min(0).max(2).default(0.1),
  /** Windows with fewer pairs (per label id) are not judged. */
  minN: z.coerce.number().int().min(1).max(1000).default(30),
  /** A pinned version to check; default the promoted one. */
  version: z.string().regex(/^[0-9a-f]{12}$/).optional(),
  /** Check and report only: neither demote nor notify. */
  dryRun: z.boolean().default(false),
});
export type DriftCheckOptions = z.input<typeof DriftCheckOptions>;

export interface LabelDrift {
  id: string;
  n: number;
  kappa: number | null;
  /** The calibration report's kappa estimate of this label id; absent when it has none. */
  baseline?: number;
  threshold?: number;
  dropped: boolean;
}

/** The labelled disagreements (judge found nothing wrong, user thumbs-down) among the newest `window`, reported apart. */
export interface DisagreementSummary {
  /** Labelled disagreement pairs read (the newest, at most `window`). */
  pairs: number;
  /**
   * Of those, the share where the person sided with the user: the person's labels differ from the judge's on a label
   * id both gave (the person found what the judge missed). `null` with no pairs.
   */
  agreedWithUser: number | null;
}

export interface DriftCheck {
  judge: string;
  /** The version checked; absent when none is promoted. */
  ref?: JudgeRef;
  status: 'ok' | 'dropped' | 'no-promoted-version' | 'no-calibration' | 'too-few-pairs';
  /** `production-sample` pairs in the window (the only pairs the kappa is computed on). */
  pairs: number;
  /** The labelled disagreements, apart from the kappa; absent when no version was checked. */
  disagreements?: DisagreementSummary;
  labels: LabelDrift[];
  reason: string;
  demoted: boolean;
  notified: boolean;
  /** The calibration report compared with. */
  calibration?: string;
}

/**
 * @example
 * const check = await checkDrift(ports, 'fm-judge', { window: 200, maxDrop: 0.1, minN: 30 }, noticeDeliveryOptionsFromEnv());
 * if (check.status === 'dropped') console.log(check.reason); // the judge is demoted and people were told
 * @throws ValidationError naming the option; NotFoundError for an unknown judge.
 */
export async function checkDrift(
  ports: Pick<Ports, 'records' | 'events' | 'now'>,
  judgeName: string,
  options: DriftCheckOptions = {},
  notify?: NoticeDeliveryOptions,
): Promise<DriftCheck> {
  const parsed = DriftCheckOptions.safeParse(options);
  if (!parsed.success) throw new ValidationError('Invalid drift check', toFieldIssues(parsed.error.issues));
  const { window, maxDrop, minN, version, dryRun } = parsed.data;
  const name = parseJudgeRef(judgeName).name;
  let ref: JudgeRef;
  try {
    const resolved = await resolveJudge(ports, version ? `${name}@${version}` : name);
    ref = { name: resolved.name, version: resolved.version };
  } catch (error) {
    if (error instanceof JudgeNotPromotedError) {
      return { judge: name, status: 'no-promoted-version', pairs: 0, labels: [], reason: `${name} has no promoted version to watch`, demoted: false, notified: false };
    }
    throw error;
  }
  const [pairs, disagreementPairs, calibration] = await Promise.all([
    windowPairs(ports, ref, 'production-sample', window),
    windowPairs(ports, ref, 'disagreement', window),
    latestCalibration(ports, ref),
  ]);
  const disagreements = summariseDisagreements(disagreementPairs);
  const base = { judge: name, ref, pairs: pairs.length, disagreements, demoted: false, notified: false, ...(calibration ? { calibration: calibration.id } : {}) };
  if (!calibration) {
    return { ...base, status: 'no-calibration', labels: labelsWithoutBaseline(pairs), reason: `${judgeRefString(ref)} has no calibration report to compare with` };
  }
  const labels: LabelDrift[] = [];
  const drops: string[] = [];
  for (const [id, series] of byLabel(pairs)) {
    const last = rollingKappa(series, window).at(-1)!;
    const criterion = calibration.criteria.find((c) => c.id === id);
    if (!criterion || criterion.kappaUndefined !== undefined) {
      labels.push({ id, n: last.n, kappa: last.kappa, dropped: false });
      continue;
    }
    const drop = detectDrop([last], { baseline: criterion.kappa.estimate, maxDrop, minN });
    labels.push({ id, n: last.n, kappa: last.kappa, baseline: criterion.kappa.estimate, threshold: drop.threshold, dropped: drop.dropped });
    if (drop.dropped) drops.push(`${id}: ${drop.reason}`);
  }
  if (drops.length === 0) {
    const judged = labels.some((l) => l.baseline !== undefined && l.kappa !== null && l.n >= minN);
    return {
      ...base,
      status: judged ? 'ok' : 'too-few-pairs',
      labels,
      reason: judged
        ? `agreement with people holds over the newest ${pairs.length} sampled pairs`
        : `no label id has ${minN} sampled pairs with a defined kappa yet (${pairs.length} pairs)`,
    };
  }
  const reason = `agreement with people dropped (drift watch): ${drops.join('; ')}`;
  if (dryRun) return { ...base, status: 'dropped', labels, reason };
  const { changed } = await demoteJudge(ports, ref, reason.slice(0, 1000), { by: 'drift-watch' });
  let notified = false;
  if (changed) {
    await raiseNotice(
      ports,
      {
        dedupKey: `judge.drift:${judgeRefString(ref)}`,
        kind: 'failure',
        severity: 'alert',
        title: `Judge ${judgeRefString(ref)} demoted: its agreement with people dropped`.slice(0, 150),
        source: { capability: 'judges' },
        link: `/judges/${encodeURIComponent(ref.name)}`,
        text: [
          `Over the newest ${pairs.length} sampled verdicts people labelled:`,
          ...drops.map((d) => `• ${d}`),
          `Disagreements with users labelled: ${disagreements.pairs}${disagreements.agreedWithUser !== null ? ` (people sided with the user on ${(100 * disagreements.agreedWithUser).toFixed(0)}%)` : ''}.`,
          `Calibration report: ${calibration.id} (gold set ${calibration.goldSet}).`,
        ]
          .join('\n')
          .slice(0, 3000),
        fields: { judge: judgeRefString(ref), window, maxDrop, minN },
      },
      notify,
    );
    notified = true;
  }
  return { ...base, status: 'dropped', labels, reason, demoted: changed, notified };
}

/** The newest `window` pairs of a version queued for `reason`, oldest first. */
async function windowPairs(ports: Pick<Ports, 'records'>, ref: JudgeRef, reason: AnnotationReason, window: number): Promise<DriftPair[]> {
  const page = await ports.records.query({
    index: 'gsi1',
    partition: driftKeys.pairsByReason(ref, reason),
    sort: { beginsWith: driftKeys.pairPrefix },
    descending: true,
    limit: window,
  });
  return page.items.map((i) => driftPairRecord.decode(i)).reverse();
}

/** How many disagreement pairs, and the share where the person's labels differ from the judge's (sided with the user). */
function summariseDisagreements(pairs: readonly DriftPair[]): DisagreementSummary {
  if (pairs.length === 0) return { pairs: 0, agreedWithUser: null };
  const sided = pairs.filter((p) => Object.entries(p.personLabels).some(([id, label]) => p.judgeLabels[id] !== undefined && p.judgeLabels[id] !== label)).length;
  return { pairs: pairs.length, agreedWithUser: sided / pairs.length };
}

/** Per label id, the (judge, person) label pairs in time order. */
function byLabel(pairs: readonly DriftPair[]): Map<string, LabelPair[]> {
  const out = new Map<string, LabelPair[]>();
  for (const p of pairs) {
    for (const [id, gold] of Object.entries(p.personLabels)) {
      const judge = p.judgeLabels[id];
      if (judge === undefined) continue;
      let list = out.get(id);
      if (!list) out.set(id, (list = []));
      list.push({ at: p.labelledAt, judge, gold });
    }
  }
  return out;
}

function labelsWithoutBaseline(pairs: readonly DriftPair[]): LabelDrift[] {
  return [...byLabel(pairs)].map(([id, series]) => {
    const last = rollingKappa(series, Math.max(1, series.length)).at(-1)!;
    return { id, n: last.n, kappa: last.kappa, dropped: false };
  });
}

/**
 * Records a labelled drift item's (judge, person) pair: one point of its judge version's rolling window.
 *
 * @example
 * await recordDriftPair(ports, { judge, itemId, reason: 'disagreement', judgeLabels, personLabels, annotator, labelledAt });
 */
export async function recordDriftPair(ports: Pick<Ports, 'records'>, pair: DriftPair): Promise<void> {
  await ports.records.put(driftPairRecord.encode(pair));
}
