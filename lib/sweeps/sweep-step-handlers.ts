/**
 * The sweep steps as the state machine calls them (`SweepSteps` of `lib/sweeps/workflow/sweep-steps.ts`): each is
 * the use case of `lib/sweeps/<step>.ts` with its settings bound. The Lambda entries and the local workflows driver
 * use `sweepStepHandlers()` (settings from the stage and the environment); tests pass their own settings.
 *
 * @example
 * const steps = sweepStepHandlers({ settings: { ...STAGES.local.sweeps, shardMaxTasks: 2 } });
 * await steps['plan-shards'](ports, { sweepId });
 */
import type { SweepSettings } from '../config/stages.ts';
import { notifyOptionsFromEnv, type NotifyOptions } from '../people/notify.ts';
import { aggregateShard, recordShardFailure } from './aggregate-shard.ts';
import { checkSaturation } from './check-saturation.ts';
import { compareWithIncumbent } from './compare-incumbent.ts';
import { notifySweep } from './notify-sweep.ts';
import { planShards } from './plan-shards.ts';
import { sweepSettingsFromEnv } from './sweep-settings.ts';
import { validateSweep } from './validate-sweep.ts';
import type { SweepSteps } from './workflow/sweep-steps.ts';

export interface SweepStepOptions {
  settings?: SweepSettings;
  notify?: NotifyOptions;
}

export function sweepStepHandlers(options: SweepStepOptions = {}): SweepSteps {
  const settings = options.settings ?? sweepSettingsFromEnv();
  const notify = options.notify ?? notifyOptionsFromEnv();
  return {
    'validate-sweep': (ports, input) => validateSweep(ports, input, settings),
    'plan-shards': (ports, input) => planShards(ports, input, settings),
    'aggregate-shard': (ports, input) => aggregateShard(ports, input),
    'record-shard-failure': (ports, input) => recordShardFailure(ports, input),
    'compare-incumbent': (ports, input) => compareWithIncumbent(ports, input),
    'check-saturation': (ports, input) => checkSaturation(ports, input, { settings, notify }),
    notify: (ports, input) => notifySweep(ports, input, notify),
  };
}
