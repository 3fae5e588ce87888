/**
 * The simulation report as the lines `npm run sim:experiments` prints: one table of claims (figure, expectation,
 * what chance alone allows, pass or FAIL), then the details that show why (the naive false-positive rate climbing
 * look by look, the ramp's days).
 *
 * @example
 * console.log(formatReport(report).join('\n'));
 */
import { table as renderTable } from '../../lib/cli/table.ts';
import type { SimulationReport } from './run-simulations.ts';

const pct = (x: number, digits = 1) => `${(x * 100).toFixed(digits)}%`;
const signedPct = (x: number | null) => (x === null ? 'n/a' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`);

/** One claim: the figure, what it should be, and whether it is within what chance explains. */
interface Claim {
  claim: string;
  observed: string;
  expected: string;
  allowed: string;
  ok: boolean;
}

/**
 * The claims of a report, each checked against its Monte-Carlo range.
 *
 * @example
 * reportClaims(report).every((c) => c.ok);
 */
export function reportClaims(report: SimulationReport): Claim[] {
  const claims: Claim[] = [];
  for (const p of report.peeking) {
    const allowed = `≤ ${pct(p.alphaRange.highRate)}`;
    claims.push({ claim: `A/A ${p.kind}, ${p.looks} looks: sequential FPR`, observed: pct(p.sequential.rate), expected: `≤ ${pct(p.alpha)}`, allowed, ok: p.sequential.hits <= p.alphaRange.high });
    claims.push({ claim: `A/A ${p.kind}, ${p.looks} looks: naive FPR`, observed: pct(p.naive.rate), expected: `> ${pct(p.alpha)} (inflated)`, allowed: `> ${pct(p.alphaRange.highRate)}`, ok: p.naive.hits > p.alphaRange.high });
    claims.push({ claim: `A/A ${p.kind}: fixed horizon, last look only`, observed: pct(p.finalLookOnly.rate), expected: pct(p.alpha), allowed: `${pct(p.alphaRange.lowRate)}–${pct(p.alphaRange.highRate)}`, ok: p.finalLookOnly.hits >= p.alphaRange.low && p.finalLookOnly.hits <= p.alphaRange.high });
  }
  const w = report.power;
  claims.push({ claim: `power at planned n = ${w.unitsPerArm}/arm (mde ${pct(w.mde, 0)})`, observed: pct(w.observed.rate), expected: pct(w.nominal), allowed: `${pct(w.nominalRange.lowRate)}–${pct(w.nominalRange.highRate)}`, ok: w.observed.hits >= w.nominalRange.low && w.observed.hits <= w.nominalRange.high });
  const c = report.cuped;
  const within = (x: number, target: number, se: number) => Math.abs(x - target) <= 3 * se;
  claims.push({ claim: 'CUPED variance reduction (reported)', observed: pct(c.varianceReduction.mean), expected: `ρ² = ${pct(c.rhoSquared)}`, allowed: `± ${pct(3 * c.varianceReduction.se, 2)} (3 se)`, ok: within(c.varianceReduction.mean, c.rhoSquared, c.varianceReduction.se) });
  claims.push({ claim: 'CUPED interval width ratio', observed: c.widthRatio.mean.toFixed(3), expected: `√(1−ρ²) = ${c.widthRatio.theory.toFixed(3)}`, allowed: `± ${(3 * c.widthRatio.se).toFixed(3)} (3 se)`, ok: within(c.widthRatio.mean, c.widthRatio.theory, c.widthRatio.se) });
  claims.push({ claim: 'CUPED Var(lift) ratio across replications', observed: c.empiricalVarianceRatio.toFixed(3), expected: `1−ρ² = ${(1 - c.rhoSquared).toFixed(3)}`, allowed: `± ${(3 * c.empiricalVarianceRatioSe).toFixed(3)} (3 se)`, ok: within(c.empiricalVarianceRatio, 1 - c.rhoSquared, c.empiricalVarianceRatioSe) });
  claims.push({ claim: 'CUPED lift unbiased', observed: signedPct(c.cupedLift.mean), expected: signedPct(c.trueLift), allowed: `± ${pct(3 * c.cupedLift.se, 2)} (3 se)`, ok: within(c.cupedLift.mean, c.trueLift, c.cupedLift.se) });
  const s = report.srm;
  claims.push({ claim: `SRM detection, ${pct(s.drop, 0)} of one arm lost, ${s.units} units`, observed: pct(s.detection.rate), expected: pct(s.detection.expected, 2), allowed: `≥ ${pct(s.detection.range.lowRate)}`, ok: s.detection.hits >= s.detection.range.low });
  claims.push({ claim: 'SRM A/A false alarms', observed: pct(s.falseAlarms.rate, 2), expected: pct(s.threshold, 2), allowed: `≤ ${pct(s.falseAlarms.range.highRate, 2)}`, ok: s.falseAlarms.hits <= s.falseAlarms.range.high });
  const r = report.ratio;
  const inNominal = (hits: number) => hits >= r.nominalRange.low && hits <= r.nominalRange.high;
  const band = `${pct(r.nominalRange.lowRate)}–${pct(r.nominalRange.highRate)}`;
  claims.push({ claim: 'ratio per turn, delta method: coverage', observed: pct(r.unit.arm.rate), expected: '95%', allowed: band, ok: inNominal(r.unit.arm.hits) });
  claims.push({ claim: 'ratio lift, delta method: coverage', observed: pct(r.unit.lift.rate), expected: '95%', allowed: band, ok: inNominal(r.unit.lift.hits) });
  claims.push({ claim: 'ratio per turn, naive per-turn: coverage', observed: pct(r.naive.arm.rate), expected: '< 95% (undercovers)', allowed: `< ${pct(r.nominalRange.lowRate)}`, ok: r.naive.arm.hits < r.nominalRange.low });
  const m = report.ramp;
  const stopped = m.stoppedAt ? `day ${m.stoppedAt.day} at ${m.stoppedAt.percent}%` : 'never';
  claims.push({
    claim: `ramp ${m.ramp.join('→')}%, +${pct(m.regression, 0)} latency`,
    observed: `stopped ${stopped}`,
    expected: `first breach (day ${m.firstBreachDay ?? 'none'})`,
    allowed: `never past ${m.ramp[m.widestStep]}%`,
    ok: m.stoppedAt !== undefined && m.stoppedAt.day === m.firstBreachDay && m.widestStep < m.ramp.length - 1 && m.treatmentAssignmentsAfter === 0,
  });
  return claims;
}

/**
 * The printed report.
 *
 * @example
 * for (const line of formatReport(report)) console.log(line);
 */
export function formatReport(report: SimulationReport): string[] {
  const lines: string[] = [];
  const claims = reportClaims(report);
  lines.push(`Experiment statistics by simulation (seed ${report.seed}); "allowed" is what chance alone explains (exact binomial 0.1% tails, or 3 standard errors)`);
  lines.push('');
  lines.push(...renderTable(['claim', 'observed', 'expected', 'allowed', 'ok'], claims.map((c) => [c.claim, c.observed, c.expected, c.allowed, c.ok ? 'pass' : 'FAIL'])).split('\n'));
  lines.push('');
  for (const p of report.peeking) {
    const marks = [0, 4, 9, 14, 19].filter((i) => i < p.looks);
    lines.push(`Why peeking needs the sequential interval (A/A ${p.kind}, ${p.replications} replications, ${p.unitsPerArm} units/arm at the last look):`);
    lines.push(`  cumulative FPR after look ${marks.map((i) => i + 1).join(', ')}: naive ${marks.map((i) => pct(p.naive.byLook[i]!)).join(', ')}; sequential ${marks.map((i) => pct(p.sequential.byLook[i]!)).join(', ')}`);
  }
  const w = report.power;
  lines.push(`Power: baseline success share ${pct(w.baselineMean)} (from the model), ${w.replications} replications; mean lift estimate ${signedPct(w.meanLift)}; the always-valid interval detects ${pct(w.sequential.rate)} at the same n (the price of peeking).`);
  const c = report.cuped;
  lines.push(`CUPED: ρ = ${c.rho.toFixed(3)}; plain lift ${signedPct(c.plainLift.mean)} ± ${pct(c.plainLift.se, 2)}, CUPED ${signedPct(c.cupedLift.mean)} ± ${pct(c.cupedLift.se, 2)} (true ${signedPct(c.trueLift)}).`);
  lines.push(`SRM: median p-value with the broken arm ${report.srm.medianPValue.toExponential(2)}.`);
  lines.push(`Ratio: naive per-turn standard error is ${report.ratio.naiveSeRatio.toFixed(2)}× the unit (delta-method) one; naive lift coverage ${pct(report.ratio.naive.lift.rate)}.`);
  const m = report.ramp;
  lines.push(`Ramp (${m.users} users, guardrail latency_ms_per_turn, maxRegression ${pct(m.maxRegression, 0)}, real analysis over DuckDB):`);
  lines.push(
    ...renderTable(
      ['day', 'ramp', 'units c/t', 'lift', 'always-valid interval', 'breached', 'schedule did'],
      m.days.map((d) => [
        String(d.day),
        `${d.percent}%`,
        `${d.unitsPerArm.control ?? 0}/${d.unitsPerArm.treatment ?? 0}`,
        signedPct(d.guardrail.relativeLift),
        d.guardrail.sequentialCi ? `[${signedPct(d.guardrail.sequentialCi.low)}, ${signedPct(d.guardrail.sequentialCi.high)}]` : 'n/a',
        d.guardrail.breached ? 'yes' : 'no',
        d.actions.map((a) => (a.kind === 'widen-ramp' ? `widen to ${m.ramp[a.toStep]}%` : a.kind === 'stop-arm' ? `stop ${a.arm} (${a.reason})` : a.kind)).join(', '),
      ]),
    ).split('\n'),
  );
  lines.push(`  final: ${m.finalStatus}, stopped arms ${m.stoppedArms.join(', ') || 'none'}; history ${m.changes.join(' → ')}; alerts ${m.alerts.length}; treatment turns served ${m.treatmentTurnsServed}; treatment assignments after: ${m.treatmentAssignmentsAfter}`);
  lines.push('');
  lines.push(`Seconds: ${Object.entries(report.seconds).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  lines.push(claims.every((x) => x.ok) ? 'All claims hold.' : `FAILED: ${claims.filter((x) => !x.ok).map((x) => x.claim).join('; ')}`);
  return lines;
}
