import { readFileSync } from 'node:fs';
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
import { registerCheckpointCommands } from './checkpoint.ts';
import { registerResultsCommand } from './results.ts';
import { registerModelCommands } from './scripted-model.ts';
import { registerNoticesCommands } from './notices.ts';
import { registerComputeCommands } from './compute.ts';
import { setActionCommand } from './target.ts';

/** The package's version (package.json), for `--version`. */
export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? '0.0.0';
}

/**
 * The `flywheel` CLI: one file per command group under `lib/cli/`; a later issue adds its group here.
 *
 * @example
 * await buildProgram().parseAsync(['node', 'flywheel', 'dlq', 'list']);
 */
export function buildProgram(): Command {
  const program = new Command('flywheel')
    .description('Flywheel: the improvement loop for AI coding agents (local runtime and API client)')
    .version(cliVersion(), '-V, --version', 'print the version')
    // Program options only before the command: `annotate calibrate … --version v` keeps its own --version.
    .enablePositionalOptions()
    .showHelpAfterError();
  // An error answer names the flags of the command that ran (lib/cli/target.ts).
  program.hook('preAction', (_program, action) => setActionCommand(action));
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
  registerCheckpointCommands(program);
  registerResultsCommand(program);
  registerModelCommands(program);
  registerNoticesCommands(program);
  registerComputeCommands(program);
  return program;
}
