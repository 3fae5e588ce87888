/**
 * `npm run sim:experiments`: the experiment statistics proved by simulation (seeded, reproducible). Users with
 * heterogeneous base rates and repeat turns (`bench/simulation/user-model.ts`), true values worked out from the model
 * (`model-truths.ts`), per-unit data reduced to the moments the analysis's SQL returns, and the statistics module the
 * analysis uses (`lib/shared/statistics/`). It reports:
 * 1. the false-positive rate under continuous peeking (A/A, 20 looks): the always-valid intervals stay at or below
 *    alpha, naive fixed-horizon peeking climbs well above it (look by look, to show why);
 * 2. power at the planned sample (`unitsPerArm` for a true effect equal to the MDE) against the nominal;
 * 3. CUPED's variance reduction against ρ² of the pre-period, and the interval width ratio;
 * 4. SRM detection when one arm loses 3% of its exposures, and the A/A false-alarm rate;
 * 5. ratio metrics by the delta method: coverage of the 95% interval, where a naive per-turn interval undercovers;
 * 6. the ramp rolling back a 20% latency regression through the real analysis over DuckDB and the schedule.
 * Each claim is checked against what chance alone explains (exact binomial ranges or 3 standard errors); the exit
 * code is 1 when one fails.
 *
 * Flags: --seed 20261204 --quick (small sizes, seconds) --json (the whole report as JSON on stdout)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { formatReport, reportClaims } from './simulation/format-report.ts';
import { FULL_SIZES, QUICK_SIZES, runSimulations } from './simulation/run-simulations.ts';

const { values: flags } = parseArgs({
  options: {
    seed: { type: 'string', default: '20261204' },
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});

const seed = Number(flags.seed);
if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed must be a non-negative integer (got ${flags.seed})`);
const dataDir = mkdtempSync(join(tmpdir(), 'flywheel-sim-'));
try {
  const report = await runSimulations({
    seed,
    sizes: flags.quick ? QUICK_SIZES : FULL_SIZES,
    dataDir,
    progress: (line) => process.stderr.write(`${line}\n`),
  });
  const claims = reportClaims(report);
  if (flags.json) process.stdout.write(`${JSON.stringify({ ...report, claims }, null, 2)}\n`);
  else process.stdout.write(`${formatReport(report).join('\n')}\n`);
  if (!claims.every((c) => c.ok)) process.exitCode = 1;
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
