import { Command } from 'commander';
import { registerDlqCommands } from './dlq.ts';
import { registerEvalCommands } from './eval.ts';
import { registerFeedbackCommands } from './feedback.ts';
import { registerJobsCommands } from './jobs.ts';
import { registerKeysCommands } from './keys.ts';
import { registerRewardSpecCommands } from './reward-spec.ts';
import { registerModesCommands } from './modes.ts';
import { registerJudgesCommands } from './judges.ts';
import { registerDecisionsCommands } from './decisions.ts';
import { registerAnnotateCommands } from './annotate.ts';
import { registerForgeCommands } from './forge.ts';
import { registerStartCommand } from './start.ts';
import { registerSuiteCommands } from './suite.ts';
import { registerSweepCommands } from './sweep.ts';
import { registerTrainCommands } from './train.ts';
import { registerExperimentCommands } from './experiment.ts';

/**
 * The `flywheel` CLI: one file per command group under `lib/cli/`; a later issue adds its group here.
 *
 * @example
 * await buildProgram().parseAsync(['node', 'flywheel', 'dlq', 'list']);
 */
export function buildProgram(): Command {
  const program = new Command('flywheel')
    .description('Flywheel: the improvement loop for AI coding agents (local runtime and API client)')
    .showHelpAfterError();
  registerStartCommand(program);
  registerFeedbackCommands(program);
  registerDlqCommands(program);
  registerEvalCommands(program);
  registerJobsCommands(program);
  registerForgeCommands(program);
  registerSuiteCommands(program);
  registerSweepCommands(program);
  registerModesCommands(program);
  registerJudgesCommands(program);
  registerDecisionsCommands(program);
  registerAnnotateCommands(program);
  registerKeysCommands(program);
  registerRewardSpecCommands(program);
  registerTrainCommands(program);
  registerExperimentCommands(program);
  return program;
}
