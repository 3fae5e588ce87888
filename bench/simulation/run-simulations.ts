/**
 * Every scenario of `npm run sim:experiments` at one size, in order, as one report (JSON-ready). The full sizes are
 * the script's; `QUICK_SIZES` are for a look in seconds (`--quick`). The test (`test/experiments/simulation.test.ts`)
 * calls the scenarios itself at its own, smaller sizes.
 *
 * @example
 * const report = await runSimulations({ seed: 20261204, sizes: FULL_SIZES, dataDir });
 */
import { simulateCuped, type CupedResult } from './simulate-cuped.ts';
import { simulatePeeking, type PeekingResult } from './simulate-peeking.ts';
import { simulatePower, type PowerResult } from './simulate-power.ts';
import { simulateRampRollback, type RampResult } from './simulate-ramp-rollback.ts';
import { simulateRatioCoverage, type RatioCoverageResult } from './simulate-ratio-coverage.ts';
import { simulateSrm, type SrmResult } from './simulate-srm.ts';

export interface SimulationSizes {
  peeking: { replications: number; unitsPerArm: number; looks: number };
  power: { replications: number; mde: number };
  cuped: { replications: number; unitsPerArm: number; trueLift: number };
  srm: { replications: number; units: number; aaReplications: number; aaUnits: number };
  ratio: { replications: number; unitsPerArm: number; trueLift: number };
  ramp: { users: number };
}

export const FULL_SIZES: SimulationSizes = {
  peeking: { replications: 1000, unitsPerArm: 4000, looks: 20 },
  power: { replications: 1000, mde: 0.1 },
  cuped: { replications: 1000, unitsPerArm: 2000, trueLift: 0.03 },
  srm: { replications: 1000, units: 200_000, aaReplications: 20_000, aaUnits: 10_000 },
  ratio: { replications: 2000, unitsPerArm: 2000, trueLift: 0.1 },
  ramp: { users: 40_000 },
};

export const QUICK_SIZES: SimulationSizes = {
  peeking: { replications: 200, unitsPerArm: 1000, looks: 20 },
  power: { replications: 200, mde: 0.15 },
  cuped: { replications: 200, unitsPerArm: 500, trueLift: 0.03 },
  srm: { replications: 100, units: 200_000, aaReplications: 2000, aaUnits: 2000 },
  ratio: { replications: 300, unitsPerArm: 800, trueLift: 0.1 },
  ramp: { users: 20_000 },
};

export interface SimulationReport {
  seed: number;
  sizes: SimulationSizes;
  peeking: PeekingResult[];
  power: PowerResult;
  cuped: CupedResult;
  srm: SrmResult;
  ratio: RatioCoverageResult;
  ramp: RampResult;
  /** Wall seconds per scenario. */
  seconds: Record<string, number>;
}

/**
 * Runs every scenario; `dataDir` is an empty folder for the ramp scenario's local ports.
 *
 * @example
 * const report = await runSimulations({ seed: 1, sizes: QUICK_SIZES, dataDir: mkdtempSync(join(tmpdir(), 'sim-')) });
 */
export async function runSimulations(options: { seed: number; sizes: SimulationSizes; dataDir: string; progress?: (line: string) => void }): Promise<SimulationReport> {
  const { seed, sizes } = options;
  const seconds: Record<string, number> = {};
  const timed = async <T>(name: string, run: () => T | Promise<T>): Promise<T> => {
    options.progress?.(`${name}…`);
    const started = performance.now();
    const result = await run();
    seconds[name] = Math.round((performance.now() - started) / 100) / 10;
    return result;
  };
  const peeking = [
    await timed('peeking (binomial)', () => simulatePeeking({ seed, kind: 'binomial', ...sizes.peeking })),
    await timed('peeking (mean)', () => simulatePeeking({ seed, kind: 'mean', ...sizes.peeking })),
  ];
  const power = await timed('power', () => simulatePower({ seed, ...sizes.power }));
  const cuped = await timed('cuped', () => simulateCuped({ seed, ...sizes.cuped }));
  const srm = await timed('srm', () => simulateSrm({ seed, ...sizes.srm }));
  const ratio = await timed('ratio coverage', () => simulateRatioCoverage({ seed, ...sizes.ratio }));
  const ramp = await timed('ramp rollback', () => simulateRampRollback({ seed, dataDir: options.dataDir, ...sizes.ramp }));
  return { seed, sizes, peeking, power, cuped, srm, ratio, ramp, seconds };
}
