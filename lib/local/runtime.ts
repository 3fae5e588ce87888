import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Logger } from '@aws-lambda-powertools/logger';
import { Worker } from 'node:worker_threads';
import { routes } from '../api/routes.ts';
import { createApiKey } from '../auth/api-keys.ts';
import { DEFAULT_TENANT, SCOPES } from '../auth/scopes.ts';
import { getStageSettings } from '../config/stages.ts';
import { localJobDefinitionsFromEnv } from '../drivers/local/jobs/job-definitions.ts';
import { isProcessAlive } from '../shared/process-liveness.ts';
import { openLocalPorts } from '../drivers/local/local-ports.ts';
import { startLocalSweeps } from '../sweeps/local/local-sweep-runtime.ts';
import { startLocalModesPipeline } from '../modes/local/local-modes-pipeline.ts';
import { localTrainerJobDefinition, startLocalDerivations } from '../judges/local/local-derive-judges.ts';
import { localTrainerPolicyJobDefinition, startLocalTraining, TRAINER_POLICY_JOB_DEFINITION } from '../training/local/local-training.ts';
import { startLocalDriftWatch } from '../judges/drift/local/local-drift-watch.ts';
import { startLocalExperiments } from '../experiments/local/local-experiments.ts';
import { startLocalNotices } from '../people/notices/local/local-notices.ts';
import { startLocalSlackWorker } from '../people/slack/local/local-slack-worker.ts';
import { startLocalJobUsage } from '../compute/local/local-job-usage.ts';
import { makeIngestConsumer, type ConsumerSettings } from './consumer-worker.ts';
import { createLocalServer } from './server.ts';

/** The checkout's `.flywheel/` folder: the default home of local state. */
export const DEFAULT_DATA_DIR = fileURLToPath(new URL('../../.flywheel/', import.meta.url));
/** What a running runtime writes into its data folder so the CLI can find it. */
export const RUNTIME_FILE = 'runtime.json';
const API_KEY_FILE = 'api-key';

export interface RuntimeInfo {
  url: string;
  apiKey: string;
  pid: number;
  dataDir: string;
  startedAt: string;
}

export interface LocalRuntimeOptions {
  dataDir?: string;
  /** 0 picks a free port. Default 4010. */
  port?: number;
  host?: string;
  /** Receives before the local queue dead-letters a message; default from the `local` stage settings. */
  maxReceiveCount?: number;
  /** The consumer's visibility timeout; failures reappear after it. Default 30. */
  visibilityTimeoutSeconds?: number;
  /**
   * Fault injection for tests and drills: queue messages whose body contains this text are reported as failed
   * without reaching the processor, so they walk the retry → dead-letter path.
   */
  failMessagesMatching?: string;
  /**
   * Run the queue consumer on a worker thread (default), so processing uses the second core and never stalls the
   * HTTP event loop; false keeps it on the main thread. Env FLYWHEEL_CONSUMER_THREAD=0 turns it off.
   */
  consumerThread?: boolean;
  /** Overrides the `local` stage's usage-plan throttle (requests/s and burst per key), e.g. to try a 429. */
  throttle?: { rateLimit: number; burstLimit: number };
  logger?: Logger;
}

export interface LocalRuntime extends RuntimeInfo {
  /** Stops the server, drains the consumer, closes the stores, removes `runtime.json`. */
  close(): Promise<void>;
}

/** Options from the environment (`FLYWHEEL_*`), overridden by what the caller passes. */
export function runtimeOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): LocalRuntimeOptions {
  const num = (v: string | undefined) => (v === undefined || v === '' ? undefined : Number(v));
  return {
    dataDir: env.FLYWHEEL_DATA_DIR || undefined,
    port: num(env.FLYWHEEL_PORT),
    maxReceiveCount: num(env.FLYWHEEL_MAX_RECEIVE_COUNT),
    visibilityTimeoutSeconds: num(env.FLYWHEEL_VISIBILITY_TIMEOUT_SECONDS),
    failMessagesMatching: env.FLYWHEEL_FAIL_MESSAGES_MATCHING || undefined,
    consumerThread: env.FLYWHEEL_CONSUMER_THREAD === undefined ? undefined : env.FLYWHEEL_CONSUMER_THREAD !== '0',
    throttle:
      env.FLYWHEEL_RATE_LIMIT === undefined
        ? undefined
        : {
            rateLimit: Number(env.FLYWHEEL_RATE_LIMIT),
            burstLimit: Number(env.FLYWHEEL_BURST_LIMIT ?? env.FLYWHEEL_RATE_LIMIT),
          },
  };
}

/**
 * Makes the data folder (0700: records, blobs, queues and key material are the owner's only), and tightens an
 * existing one.
 */
export function ensureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
}

/**
 * The local API key kept in the data folder (`api-key`, 0600), created on first use. The runtime registers it as a
 * key of the default tenant with every scope (`ingest,read,admin`); `flywheel keys create` makes narrower ones.
 */
export function ensureLocalApiKey(dataDir: string): string {
  const file = join(dataDir, API_KEY_FILE);
  ensureDataDir(dataDir);
  try {
    const key = readFileSync(file, 'utf8').trim();
    if (key !== '') {
      chmodSync(file, 0o600);
      return key;
    }
  } catch {
    // first start: create one below
  }
  const key = `fwlocal_${randomBytes(18).toString('base64url')}`;
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return key;
}

/** What a running runtime wrote into `dataDir`, or undefined when none is running there. */
export function readRuntimeInfo(dataDir: string): RuntimeInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(join(dataDir, RUNTIME_FILE), 'utf8')) as RuntimeInfo;
    return isProcessAlive(info.pid) ? info : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts the whole local system: local ports over SQLite and files in `dataDir`, the HTTP server with the API
 * Gateway event shape and key check, and the ingest queue consumer running the processor Lambda's handler.
 *
 * @example
 * const rt = await startLocalRuntime({ dataDir: '.flywheel', port: 0 });
 * console.log(rt.url, rt.apiKey);
 * await rt.close();
 */
export async function startLocalRuntime(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const settings = getStageSettings('local');
  const dataDir = resolve(options.dataDir ?? DEFAULT_DATA_DIR);
  ensureDataDir(dataDir);
  const logLevel = process.env.FLYWHEEL_LOG_LEVEL ?? 'INFO';
  const logger = options.logger ?? new Logger({ serviceName: 'flywheel-local', logLevel: logLevel as 'INFO' });
  const maxReceiveCount = options.maxReceiveCount ?? settings.maxReceiveCount;
  // The runtime is the data folder's jobs runner: Batch jobs (the state machines' Batch tasks, `flywheel jobs submit`)
  // run here as child processes under the five categories (lib/drivers/local/local-jobs.ts).
  const local = await openLocalPorts(dataDir, { maxReceiveCount, jobs: { definitions: { trainer: localTrainerJobDefinition(), [TRAINER_POLICY_JOB_DEFINITION]: localTrainerPolicyJobDefinition(), ...localJobDefinitionsFromEnv() } } });
  const { close: closePorts, ...localPorts } = local;
  // Sweeps: the sweep state machine's definition run by the local workflows driver, its shards as local jobs, the
  // stage's schedule (FLYWHEEL_SCHEDULE=off turns it off) and the checkpoint.registered trigger
  // (lib/sweeps/local/local-sweep-runtime.ts). Its workflows port serves `POST /v1/sweeps`.
  const sweeps = local.jobs ? startLocalSweeps({ dataDir, ports: localPorts, jobs: local.jobs, logger }) : undefined;
  // Judge derivations: a checkpoint registered as the top model starts one (lib/judges/local/local-derive-judges.ts);
  // its trainer job runs `python3 -m flywheel_trainer job` (batch-images/trainer/) as a local job.
  const derivations = local.jobs ? startLocalDerivations({ dataDir, ports: localPorts, jobs: local.jobs, logger }) : undefined;
  // Training runs: the train-policy workflow, its policy job `trainer-policy` as a local job, the heartbeat watch
  // (lib/training/local/local-training.ts). The API's workflows port runs train-policy there and the sweep here.
  const training = local.jobs ? startLocalTraining({ dataDir, ports: localPorts, jobs: local.jobs, logger, ...(sweeps ? { sweepWorkflows: sweeps.workflows } : {}) }) : undefined;
  const ports = { ...localPorts, ...(training ? { workflows: training.route(sweeps?.workflows) } : sweeps ? { workflows: sweeps.workflows } : {}) };
  const apiKey = ensureLocalApiKey(dataDir);
  // The runtime's own key: an admin key of the default tenant (idempotent; a revoked one stays revoked).
  await createApiKey(localPorts.records, { tenant: DEFAULT_TENANT, scopes: [...SCOPES], name: 'local runtime (api-key file)', key: apiKey }, new Date());

  const consumerSettings: ConsumerSettings = {
    dataDir,
    maxReceiveCount,
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? 30,
    ...(options.failMessagesMatching ? { failMessagesMatching: options.failMessagesMatching } : {}),
    logLevel,
  };
  const consumer = options.consumerThread === false ? inProcessConsumer() : threadConsumer();
  // Failure modes: feedback.stored / report.stored from the event log → a local queue (+DLQ) → the classify consumer
  // (lib/modes/local/local-modes-pipeline.ts), as the EventBridge rule → SQS → Lambda on AWS. It runs on the consumer
  // thread (lib/local/consumer-worker.ts), or here when the consumer does.
  const modes = options.consumerThread === false ? startLocalModesPipeline(localPorts, { dataDir, maxReceiveCount, logger }) : undefined;
  // Drift watch: judge.verdict (published by the failure-mode chain on either thread) from the event log → the same
  // handler as the judges/drift-watch Lambda, which queues disagreements and a sample for people
  // (lib/judges/drift/local/local-drift-watch.ts). A light tail of the log: it runs here on the main thread.
  const drift = startLocalDriftWatch(localPorts, { logger, maxReceiveCount });
  // Experiments: the stage's schedule analyses every running experiment and acts (a guardrail breach or SRM stops the
  // arm, a held ramp step widens; FLYWHEEL_SCHEDULE=off turns it off), and a tail of the event log drafts proposed
  // experiments and archives failure modes as metrics (lib/experiments/local/local-experiments.ts).
  const experiments = startLocalExperiments(localPorts, { logger, maxReceiveCount });
  // runtime people: slack
  // The Slack bot's worker: people.slack.work (what /v1/slack/commands and /v1/slack/interactions acknowledged) from
  // the event log → the people-slack queue (+DLQ) → the people/slack-worker handler (lib/people/slack/local/).
  const slackWorker = startLocalSlackWorker(ports, { dataDir, maxReceiveCount, logger });
  // runtime people: notices
  // Notices: the stall check over watched runs and the deliveries that waited out quiet hours, every 5 minutes
  // (lib/people/notices/local/local-notices.ts), as the people/notices-schedule function on AWS.
  const notices = startLocalNotices(localPorts, { logger });
  // runtime compute: usage and budgets
  // Compute accounting: the local jobs driver's transitions → recordJobStateChange, as Batch's events are on AWS
  // (lib/compute/local/local-job-usage.ts).
  const computeUsage = local.jobs ? startLocalJobUsage({ ports: localPorts, jobs: local.jobs, logger }) : undefined;
  // server console: files
  // The web console at `/`: built into the data folder at start (under a second; copied from the last build when its
  // sources are unchanged), served by the open console routes (lib/console/http/console-assets.ts), which read the
  // folder FLYWHEEL_CONSOLE_DIR names. A failed build leaves the API up: `/` then says the console is not built.
  const consoleBuilt = await (async () => {
    const [{ ensureConsoleBuilt }, { CONSOLE_DIR_ENV }] = await Promise.all([import('../console/ensure-console-built.ts'), import('../console/http/console-assets.ts')]);
    try {
      await ensureConsoleBuilt({ outDir: join(dataDir, 'console') });
      process.env[CONSOLE_DIR_ENV] = join(dataDir, 'console');
      return true;
    } catch (error) {
      logger.error('the console did not build', { error: error as Error });
      return false;
    }
  })();
  const server = createLocalServer({ routes, ports, throttle: { ...settings.api, ...options.throttle }, logger });
  const url = await server.listen(options.port ?? 4010, options.host ?? '127.0.0.1');

  const info: RuntimeInfo = { url, apiKey, pid: process.pid, dataDir, startedAt: new Date().toISOString() };
  // It holds the key: the owner's only, like the key file.
  writeFileSync(join(dataDir, RUNTIME_FILE), `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  chmodSync(join(dataDir, RUNTIME_FILE), 0o600);
  logger.info('local runtime ready', { url, dataDir, maxReceiveCount });
  if (consoleBuilt) logger.info('console ready', { console: `${url}/`, signIn: `paste the key in ${join(dataDir, API_KEY_FILE)}` });

  let closing: Promise<void> | undefined;
  return {
    ...info,
    close() {
      closing ??= (async () => {
        await server.close();
        await consumer.stop();
        await modes?.stop();
        await drift.stop();
        await experiments.close();
        // close people: slack
        await slackWorker.close();
        // close people: notices
        await notices.close();
        // close compute: usage and budgets
        await computeUsage?.close();
        await training?.close();
        await derivations?.close();
        await sweeps?.close();
        await local.jobs?.close();
        await closePorts();
        rmSync(join(dataDir, RUNTIME_FILE), { force: true });
        logger.info('local runtime stopped');
      })();
      return closing;
    },
  };

  function inProcessConsumer() {
    const c = makeIngestConsumer(ports, consumerSettings, logger);
    c.start();
    return { stop: () => c.stop() };
  }

  function threadConsumer() {
    const worker = new Worker(new URL('./consumer-worker.ts', import.meta.url), {
      workerData: { flywheelConsumer: consumerSettings },
      // The processor handles at most a few batches of 10 messages at once: a small heap keeps the RSS down.
      resourceLimits: { maxOldGenerationSizeMb: 192, maxYoungGenerationSizeMb: 16 },
    });
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.on('error', (error) => logger.error('consumer thread failed', { error }));
    return {
      async stop() {
        worker.postMessage('stop');
        const timer = setTimeout(() => void worker.terminate(), 10_000);
        await exited;
        clearTimeout(timer);
      },
    };
  }
}
