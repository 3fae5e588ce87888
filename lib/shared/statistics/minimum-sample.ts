/**
 * The minimum samples below which no verdict is given, and the rules in the words users read (the experiment
 * analysis, the sweep report's table and JSON carry them). A difference measured on a handful of units or tasks is
 * mostly noise, and the normal approximations under every interval here need a sample to hold.
 */

/** An experiment comparison says better / worse only when both arms have at least this many units. */
export const MIN_UNITS_PER_ARM = 100;

/** A sweep comparison says better / worse only when the difference rests on at least this many tasks. */
export const MIN_TASKS_FOR_VERDICT = 20;

/** A suite is marked saturated only when the best cell scored at least this many tasks. */
export const MIN_TASKS_FOR_SATURATION = 20;

/** The rules, as users read them. */
export const SAMPLE_RULES: Record<'experimentVerdict' | 'sweepVerdict' | 'saturation' | 'srm', string> = {
  experimentVerdict: `better / worse only when the interval of the relative lift (always-valid when the experiment is sequential) excludes 0 and both arms have ≥ ${MIN_UNITS_PER_ARM} units; below that: too-few-units`,
  sweepVerdict: `better / worse only when the 95% interval of the difference excludes 0 and it rests on ≥ ${MIN_TASKS_FOR_VERDICT} tasks; below that: too-few-tasks`,
  saturation: `a suite is saturated only when its best strict score reaches the threshold over ≥ ${MIN_TASKS_FOR_SATURATION} scored tasks, every shard aggregated`,
  srm: 'sample-ratio mismatch: Pearson chi-squared of units per arm against the intended shares, p < 0.001',
};
