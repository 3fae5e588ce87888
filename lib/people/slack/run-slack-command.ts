/**
 * The worker's half of `/flywheel …`: the command, already acknowledged by the endpoint, is done here and answered
 * in Slack through the Web API.
 *
 * - `compare`: a parent message ("Comparing A and B": status, steps, final metrics) in the channel (or in the thread
 *   the command came from), then one PNG chart per shared metric uploaded into its thread;
 * - `status`: the loop overview as a Block Kit message;
 * - `sweep`, `train`, `experiment start`: the existing use cases (`startSweep`, `startTrainingRun`, `startExperiment`),
 *   answered in the thread with the id and what to watch. Only admin users act (`slack-permissions.ts`);
 * - a request the use case refuses (unknown suite, bad training request, experiment not a draft) is answered with the
 *   reason in the thread; anything else throws, so the queue retries it and then dead-letters it.
 *
 * @example
 * await runSlackCommand(deps, { kind: 'command', channelId: 'C1', userId: 'U1', command: '/flywheel', text: 'status', receivedAt });
 */
import type { SweepSettings } from '../../config/stages.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import { startExperiment } from '../../experiments/start-experiment.ts';
import { getLoopOverview } from '../../overview/get-loop-overview.ts';
import type { Ports } from '../../ports/ports.ts';
import { startSweep } from '../../sweeps/start-sweep.ts';
import { startTrainingRun } from '../../training/runs/start-training-run.ts';
import { compareRuns } from './compare-runs.ts';
import { parseSlackCommand, SLACK_ADMIN_COMMANDS, SLACK_USAGE, type SlackCommand } from './parse-command.ts';
import { mayAct, slackActor } from './slack-permissions.ts';
import type { SlackWebApi } from './slack-web-api.ts';
import type { SlackCommandWork } from './slack-work.ts';
import { statusBlocks } from './status-blocks.ts';

export interface SlackWorkerDeps {
  ports: Ports;
  /** The bot; absent when no token is configured (the work fails and dead-letters, saying so). */
  slack: SlackWebApi;
  /** Slack user ids that may act. */
  admins: ReadonlySet<string>;
  sweepSettings: SweepSettings;
  /** The console's address, for links. */
  consoleUrl?: string;
}

/** Errors a person can fix (answered in Slack); anything else is retried by the queue. */
export function isAnswerable(error: unknown): error is Error {
  return error instanceof ValidationError || error instanceof NotFoundError || error instanceof ConflictError;
}

/**
 * @example
 * await runSlackCommand(deps, work);
 */
export async function runSlackCommand(deps: SlackWorkerDeps, work: SlackCommandWork): Promise<void> {
  const { slack } = deps;
  const reply = (text: string, threadTs = work.threadTs, blocks?: unknown[]) =>
    slack.postMessage({ channel: work.channelId, text, ...(blocks ? { blocks } : {}), ...(threadTs ? { threadTs } : {}) });
  let command: SlackCommand;
  try {
    command = parseSlackCommand(work.text);
  } catch (error) {
    if (error instanceof ValidationError) return void (await reply(error.message));
    throw error;
  }
  if (SLACK_ADMIN_COMMANDS.has(command.kind) && !mayAct(deps.admins, work.userId)) {
    return void (await reply(`<@${work.userId}> only the stage's Slack admins may start things from Slack (notifications.slackApp.adminUserIds).`));
  }
  try {
    await run(deps, work, command, reply);
  } catch (error) {
    if (!isAnswerable(error)) throw error;
    await reply(`:warning: ${error.message}`.slice(0, 3000));
  }
}

type Reply = (text: string, threadTs?: string, blocks?: unknown[]) => Promise<{ ts: string }>;

async function run(deps: SlackWorkerDeps, work: SlackCommandWork, command: SlackCommand, reply: Reply): Promise<void> {
  const { ports, slack } = deps;
  const by = slackActor(work.userId);
  switch (command.kind) {
    case 'help':
      await reply(SLACK_USAGE);
      return;
    case 'status': {
      const { text, blocks } = statusBlocks(await getLoopOverview(ports, ports.now()), deps.consoleUrl);
      await reply(text, work.threadTs, blocks);
      return;
    }
    case 'compare': {
      const comparison = await compareRuns(ports, command.runA, command.runB);
      const parent = await reply(comparison.text, work.threadTs, comparison.blocks);
      const thread = work.threadTs ?? parent.ts;
      for (const chart of comparison.charts) {
        await slack.uploadFile({ channel: work.channelId, threadTs: thread, filename: chart.filename, title: `${chart.metric}: ${command.runA} vs ${command.runB}`, bytes: chart.png });
      }
      return;
    }
    case 'sweep': {
      const started = await startSweep(ports, { suites: [command.suite], checkpoints: [command.checkpoint] }, deps.sweepSettings, { trigger: 'manual', requestedBy: by });
      const parent = await reply(`Sweep ${started.sweepId} started by <@${work.userId}>: ${started.checkpoints.join(', ')} × ${started.suites.join(', ')} (${started.modes.join(', ')})`);
      await reply(`Watch it: \`flywheel sweep status ${started.sweepId} --watch\` (execution ${started.executionId})`, work.threadTs ?? parent.ts);
      return;
    }
    case 'train': {
      const { run: trainingRun, created } = await startTrainingRun(ports, command.request, by);
      const parent = await reply(`Training run ${trainingRun.runId} ${created ? 'started' : 'exists already'} (${trainingRun.status})${command.preset ? `, preset ${command.preset}` : ''}, by <@${work.userId}>`);
      await reply(`Watch it: \`flywheel train status ${trainingRun.runId}\`, its curves: \`flywheel train curves ${trainingRun.runId}\`; compare it here: \`/flywheel compare ${trainingRun.runId} OTHER_RUN\``, work.threadTs ?? parent.ts);
      return;
    }
    case 'experiment-start': {
      const { record, changed } = await startExperiment(ports, command.experimentId, by);
      const parent = await reply(`Experiment ${command.experimentId} ${changed ? 'started' : 'was running already'} (${record.status}), by <@${work.userId}>`);
      await reply(`Watch it: \`flywheel experiment status ${command.experimentId}\`; the schedule analyses it and asks here when a decision is due.`, work.threadTs ?? parent.ts);
      return;
    }
  }
}
