/**
 * The sweep steps as the state machine calls them (`SweepSteps` of `lib/sweeps/workflow/sweep-steps.ts`): each is
 * the use case of `lib/sweeps/<step>.ts` with its settings bound, and a heartbeat after the plan and each shard. The Lambda entries and the local workflows driver
 * use `sweepStepHandlers()` (settings from the stage and the environment); tests pass their own settings.
 *
 * @example
 * const steps = sweepStepHandlers({ settings: { ...STAGES.local.sweeps, shardMaxTasks: 2 } });
 * await steps['plan-shards'](ports, { sweepId });
 */
import type { SweepSettings } from '../config/stages.ts';
import { noticeDeliveryOptionsFromEnv, type NoticeDeliveryOptions } from '../people/notices/deliver-notice.ts';
import { beatSweep } from './sweep-heartbeat.ts';
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
  /** Where notices go (the log, Slack, the bus); default from the environment. */
  notify?: NoticeDeliveryOptions;
}

export function sweepStepHandlers(options: SweepStepOptions = {}): SweepSteps {
  const settings = options.settings ?? sweepSettingsFromEnv();
  const notify = options.notify ?? noticeDeliveryOptionsFromEnv();
  return {
    'validate-sweep': (ports, input) => validateSweep(ports, input, settings),
    // Heartbeats (lib/people/heartbeats/): the plan starts the sweep's watch, each shard done beats with its progress.
    'plan-shards': async (ports, input) => beatSweep(ports, input.sweepId, 'plan-shards', await planShards(ports, input, settings)),
    'aggregate-shard': async (ports, input) => beatSweep(ports, input.sweepId, `shard ${input.shard.shardId} aggregated`, await aggregateShard(ports, input)),
    'record-shard-failure': async (ports, input) => beatSweep(ports, input.sweepId, `shard ${input.shard.shardId} failed`, await recordShardFailure(ports, input)),
    'compare-incumbent': (ports, input) => compareWithIncumbent(ports, input),
    'check-saturation': (ports, input) => checkSaturation(ports, input, { settings, notify }),
    notify: (ports, input) => notifySweep(ports, input, notify),
  };
}
