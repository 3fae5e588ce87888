/**
 * The promotion gate: does a judge version's calibration report allow it to replace the incumbent?
 *
 * Per label id of the candidate's report (a criterion id, `preference`, `mode:<id>`):
 *  - at least `rule.minItems` gold items (`n`);
 *  - coverage: the judge answered at least `rule.minCoverage` (default 0.95) of the id's gold items, and of the gold
 *    set as a whole (a voided or refused verdict is unanswered, not left out);
 *  - support: every class people used for the id has at least `rule.minClassSupport` (default 5) answered items;
 *  - the bootstrap: kappa is defined on at least `rule.minDefinedResamples` (default 0.95) of the resamples;
 *  - kappa defined (not every item in one and the same class) and its bootstrap lower bound ≥ `rule.minKappaLower`;
 *  - for the ids the incumbent's report also has: the candidate's kappa estimate ≥ the incumbent's − `rule.maxKappaDrop`.
 * And when `rule.requireCheaper` and there is an incumbent: the candidate's cost per verdict is known and strictly below
 * the incumbent's (the costs given in `cost` win over the reports' `costPerVerdictUsd`). With no incumbent the
 * comparisons hold vacuously. Every failed condition is a reason naming the label id and the numbers. A report written
 * before coverage and the bootstrap's defined share were recorded (the fields absent) is judged without those two.
 */
import { ValidationError } from '../../errors.ts';
import { AcceptanceRuleSchema, type AcceptanceDecision, type AcceptanceRuleInput, type CalibrationReport } from '../schemas.ts';

/** Numbers in reasons: three decimals, enough to see why without noise. */
function fmt(x: number): string {
  return Number.isFinite(x) ? x.toFixed(3) : String(x);
}

function fmtUsd(x: number): string {
  return `$${x.toPrecision(3)}`;
}

/**
 * Decide whether `candidate` passes `rule` (against `incumbent` when there is one).
 *
 * @example
 * const decision = decideAcceptance(candidateReport, incumbentReport, { minKappaLower: 0.6, maxKappaDrop: 0, minItems: 30, minCoverage: 0.95, requireCheaper: true });
 * // { accepted: false, reasons: ['correctness: kappa lower bound 0.512 < 0.600 (estimate 0.640, n 120)'] }
 */
export function decideAcceptance(
  candidate: CalibrationReport,
  incumbent: CalibrationReport | undefined,
  rule: AcceptanceRuleInput,
  cost?: { candidate?: number; incumbent?: number },
): AcceptanceDecision {
  const parsed = AcceptanceRuleSchema.safeParse(rule);
  if (!parsed.success) {
    throw new ValidationError(`invalid acceptance rule: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      parsed.error.issues.map((i) => ({ path: ['rule', ...i.path.map(String)].join('.'), message: i.message })));
  }
  const r = parsed.data;
  const reasons: string[] = [];
  if (candidate.criteria.length === 0) reasons.push('the candidate report has no label ids to judge it by');
  const incumbentById = new Map((incumbent?.criteria ?? []).map((c) => [c.id, c]));
  const cov = candidate.coverage;
  if (cov !== undefined && !(cov.share >= r.minCoverage)) {
    reasons.push(`coverage: the judge answered ${cov.answered} of ${cov.goldItems} gold items (${fmt(cov.share)} < minCoverage ${fmt(r.minCoverage)})`);
  }

  for (const c of candidate.criteria) {
    if (c.n < r.minItems) reasons.push(`${c.id}: n ${c.n} < minItems ${r.minItems}`);
    if (c.coverage !== undefined && !(c.coverage >= r.minCoverage)) {
      reasons.push(`${c.id}: coverage ${fmt(c.coverage)} < minCoverage ${fmt(r.minCoverage)} (answered ${c.n} of ${c.goldItems ?? '?'} gold items)`);
    }
    for (const [label, m] of Object.entries(c.perClass)) {
      // A class with no gold support is one only the judge used: not a gold class.
      if (m.support > 0 && m.support < r.minClassSupport) {
        reasons.push(`${c.id}: class ${label} has ${m.support} gold items < minClassSupport ${r.minClassSupport}`);
      }
    }
    if (c.kappaUndefined === undefined && c.bootstrapDefined !== undefined && !(c.bootstrapDefined >= r.minDefinedResamples)) {
      reasons.push(`${c.id}: kappa defined on ${fmt(c.bootstrapDefined)} of the bootstrap resamples < minDefinedResamples ${fmt(r.minDefinedResamples)}`);
    }
    if (c.kappaUndefined !== undefined) {
      reasons.push(`${c.id}: kappa undefined (${c.kappaUndefined}), n ${c.n}`);
      continue;
    }
    if (!(c.kappa.low >= r.minKappaLower)) {
      reasons.push(`${c.id}: kappa lower bound ${fmt(c.kappa.low)} < minKappaLower ${fmt(r.minKappaLower)} (estimate ${fmt(c.kappa.estimate)}, n ${c.n})`);
    }
    const inc = incumbentById.get(c.id);
    if (inc !== undefined && inc.kappaUndefined === undefined) {
      const floor = inc.kappa.estimate - r.maxKappaDrop;
      if (!(c.kappa.estimate >= floor)) {
        reasons.push(
          `${c.id}: kappa ${fmt(c.kappa.estimate)} below the incumbent's ${fmt(inc.kappa.estimate)} − maxKappaDrop ${fmt(r.maxKappaDrop)} = ${fmt(floor)}`,
        );
      }
    }
  }

  if (r.requireCheaper && incumbent !== undefined) {
    const candCost = cost?.candidate ?? candidate.costPerVerdictUsd;
    const incCost = cost?.incumbent ?? incumbent.costPerVerdictUsd;
    if (candCost === undefined || incCost === undefined) {
      reasons.push(
        `cost: requireCheaper but the cost per verdict is unknown (candidate ${candCost === undefined ? 'unknown' : fmtUsd(candCost)}, incumbent ${incCost === undefined ? 'unknown' : fmtUsd(incCost)})`,
      );
    } else if (!(candCost < incCost)) {
      reasons.push(`cost: candidate ${fmtUsd(candCost)} per verdict is not below the incumbent's ${fmtUsd(incCost)}`);
    }
  }
  return { accepted: reasons.length === 0, reasons };
}
