import { getStageSettings, type SweepSettings } from '../config/stages.ts';
import { JUDGE_MODEL_ENV } from '../modes/modes-models.ts';
import { USER_MODEL_ENV } from '../rollout/shard-spec.ts';

/**
 * The sweep settings a step runs with: the stage's (`FLYWHEEL_STAGE`, default `local`), each overridable by an
 * environment variable so a deployment can tune one without a code change:
 * FLYWHEEL_SATURATION_THRESHOLD, FLYWHEEL_SHARD_MAX_TASKS, FLYWHEEL_TASKS_PER_CHILD, FLYWHEEL_ATTEMPTS_PER_TASK, and the
 * models of judge-graded and behavioural tasks FLYWHEEL_JUDGE_MODEL and FLYWHEEL_USER_MODEL (as the eval CLI reads them).
 */
export function sweepSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): SweepSettings {
  const base = getStageSettings(env.FLYWHEEL_STAGE || 'local').sweeps;
  const judgeModel = env[JUDGE_MODEL_ENV]?.trim() || base.judgeModel;
  const userModel = env[USER_MODEL_ENV]?.trim() || base.userModel;
  const num = (v: string | undefined, fallback: number) => (v === undefined || v === '' || !Number.isFinite(Number(v)) ? fallback : Number(v));
  return {
    saturationThreshold: num(env.FLYWHEEL_SATURATION_THRESHOLD, base.saturationThreshold),
    shardMaxTasks: num(env.FLYWHEEL_SHARD_MAX_TASKS, base.shardMaxTasks),
    tasksPerChild: num(env.FLYWHEEL_TASKS_PER_CHILD, base.tasksPerChild),
    attemptsPerTask: num(env.FLYWHEEL_ATTEMPTS_PER_TASK, base.attemptsPerTask),
    ...(judgeModel ? { judgeModel } : {}),
    ...(userModel ? { userModel } : {}),
  };
}
