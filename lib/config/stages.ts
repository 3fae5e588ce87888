/**
 * Typed per-stage settings, chosen with `-c stage=dev|prod` (CDK) or `--stage` (CLI). The local runtime uses `local`.
 * Every number that differs between stages lives here, so a change of policy is one reviewed diff.
 */
import type { ComputeCategory, ComputePool } from '../ports/jobs.ts';

export type StageName = 'local' | 'dev' | 'prod';

export interface ApiThrottle {
  /** Steady-state requests per second per API key (usage plan) and per stage. */
  rateLimit: number;
  /** Bucket size: requests allowed at once above the steady rate. */
  burstLimit: number;
  /** Requests per key per day; 0 means no quota. */
  dailyQuota: number;
  /** The web ACL in front of the API (`lib/constructs/api-waf.ts`). */
  waf: ApiWafSettings;
}

/**
 * Rate rules of the API's web ACL, per client IP over WAF's 5-minute window (WAF takes 10 to 2,000,000,000). A client
 * over a limit gets 429 with `Retry-After` until its rate falls back under it. They bound what one address can cost
 * before API Gateway looks at its key: the usage plan throttles per key, these per address, keyed or not.
 */
export interface ApiWafSettings {
  /** Requests per IP per 5 minutes, any request. */
  requestsPerIpPer5Minutes: number;
  /** Requests per IP per 5 minutes that carry no `x-api-key` header (all refused with 403: scanners, floods). */
  keylessRequestsPerIpPer5Minutes: number;
}

/**
 * Fair-share weights of the five compute categories, as *shares of capacity*: a category with weight 4 gets twice the
 * capacity of one with weight 2 when both have jobs waiting (an idle category's share goes to the others).
 *
 * AWS Batch's `weightFactor` runs the other way (lower = more capacity: a share's portion is inversely proportional to
 * its weight factor), so these numbers are never handed to Batch as they are: `batchWeightFactors`
 * (`lib/compute/batch-weight-factors.ts`) is the one place that converts them. The local jobs driver uses them
 * directly (stride scheduling, `lib/compute/stride-scheduler.ts`).
 */
export type ComputeShares = Record<ComputeCategory, number>;

/** One hardware pool: a managed compute environment and its fair-share job queue on AWS, a concurrency cap locally. */
export interface ComputePoolSettings {
  /** EC2 instance types or families for the managed compute environment (`g6e` = every size of the family). */
  instanceTypes: string[];
  /** Upper bound of the compute environment, in vCPUs (caps cost). */
  maxvCpus: number;
  /** Jobs (array children count one each) the local jobs driver runs at once in this pool; 0 = no such hardware here. */
  localMaxConcurrency: number;
}

/**
 * One more way out of the Batch jobs' security group, for model endpoints that do not listen on 443 (the group
 * allows HTTPS out only). A checkpoint served by an endpoint on another port is unreachable from a rollout job on AWS
 * unless its address and port are listed here (`lib/compute/infra/batch-network.ts`).
 */
export interface ModelEndpointEgress {
  /** IPv4 range of the endpoint, e.g. `10.20.0.0/16` (a peered VPC) or `10.20.3.4/32` (one server). */
  cidr: string;
  /** TCP port, 1–65535 (443 is always open). */
  port: number;
  /** Why the hole is there (the security group rule's description). */
  description: string;
}

/** Where the alarm topic goes besides the e-mail addresses of `alarms.emails`. */
export interface NotificationSettings {
  /**
   * A Slack channel AWS Chatbot posts every alarm-topic message to (`lib/people/infra/slack-channel.ts`); absent: none.
   * Authorise the workspace with Chatbot once in the console first: it shows the workspace id (e.g. `T0123ABCD`); the
   * channel id ends the channel's link (e.g. `C0123ABCD`). Separate from the sweep steps' webhook (FLYWHEEL_SLACK_WEBHOOK_URL).
   */
  slack?: { workspaceId: string; channelId: string };
  /**
   * The research bot (`lib/people/slack/`): its Slack app's signing secret and bot token as Secrets Manager secret
   * names (read once per cold start), the channel it answers in by default, and the Slack user ids allowed to act
   * (start sweeps, training runs and experiments; answer decisions). Read-only commands (`compare`, `status`, `help`)
   * are open to the workspace. Absent: the Slack endpoints answer 503 "Slack app not configured".
   */
  slackApp?: { signingSecretName: string; botTokenSecretName: string; channelId?: string; adminUserIds: string[] };
}

/** Sweeps (`lib/sweeps/`): how a sweep is cut into shards and when a suite counts as saturated. */
export interface SweepSettings {
  /** Best strict score (0–1) at which a suite is marked saturated (a suite's own `saturationThreshold` wins). */
  saturationThreshold: number;
  /**
   * Scored tasks the best cell needs before a suite can be marked saturated (default `MIN_TASKS_FOR_SATURATION`, 20:
   * a perfect score on a handful of tasks says little); a stage with small private suites may lower it.
   */
  saturationMinTasks?: number;
  /** Tasks per shard at most: one shard is one Batch array job. */
  shardMaxTasks: number;
  /** Tasks one array child runs (each child may start its own vLLM server, so not 1). */
  tasksPerChild: number;
  /** Attempts per task when a sweep request does not say. */
  attemptsPerTask: number;
  /**
   * The rubric judge's model spec (`bedrock:<id>` | `openai:<model>@<baseUrl>`) for judge-graded tasks of a sweep:
   * written into every shard spec (`judgeModel`) and set as FLYWHEEL_JUDGE_MODEL on the rollout job definition (a
   * Bedrock model is granted to the job's role). Absent by default: judge-graded tasks then end `ungraded`.
   * FLYWHEEL_JUDGE_MODEL overrides it where the sweep steps run (`sweepSettingsFromEnv`).
   */
  judgeModel?: string;
  /** The simulated user's model spec for behavioural cases, the same way (`userModel`, FLYWHEEL_USER_MODEL). Absent by default. */
  userModel?: string;
}

/**
 * The price of a judge's model (`FLYWHEEL_JUDGE_PRICING` takes the same JSON): a judge whose `model` starts with
 * `prefix` (the longest match wins) costs `usdPerVerdict` per verdict, or `usdPerSecond` of its latency (a served
 * endpoint: a GPU's hourly price / 3600). A derived judge is promoted only when it is shown cheaper than the incumbent,
 * so an incumbent's model with no price here keeps every derived judge from promotion (the derivation report says so).
 */
export interface JudgeModelPrice {
  prefix: string;
  usdPerVerdict?: number;
  usdPerSecond?: number;
}

/** Judges (`lib/judges/`): what their verdicts cost, set as FLYWHEEL_JUDGE_PRICING on the derive step and judges/api. */
export interface JudgeSettings {
  pricing: JudgeModelPrice[];
}

export interface StageSettings {
  stage: StageName;
  /** Whether stateful resources survive `cdk destroy` (prod keeps them). */
  retainData: boolean;
  /** CloudWatch log retention for functions and API access logs, in days. */
  logRetentionDays: number;
  /** Raw feedback archives move to infrequent access after this many days, and expire after `rawArchiveExpireDays` (0 = never). */
  rawArchiveInfrequentAccessDays: number;
  rawArchiveExpireDays: number;
  /** Days that noncurrent object versions are kept. */
  noncurrentVersionDays: number;
  /** How long a dead-lettered message is kept (SQS allows up to 14 days). */
  deadLetterRetentionDays: number;
  /** Receives before a message is moved to the dead-letter queue. */
  maxReceiveCount: number;
  api: ApiThrottle;
  alarms: {
    /** Email addresses subscribed to the alarm topic (Slack: `notifications.slack`). */
    emails: string[];
    /** Dead-letter queue depth that raises the alarm. */
    deadLetterDepthThreshold: number;
    /** Handler errors in 5 minutes that raise the alarm. */
    handlerErrorThreshold: number;
    /**
     * Age of the oldest message (seconds) that raises a queue's alarm: a consumer that stopped, or is too slow for
     * the load. `deadLetter` is for the dead-letter queues, where the age counts from the first enqueue into the
     * source queue and a message is lost at `deadLetterRetentionDays`: the alarm leaves days to redrive.
     */
    queueAgeSeconds: { ingest: number; modes: number; deadLetter: number };
  };
  notifications: NotificationSettings;
  /** Fair-share weights (shares of capacity, higher = more) of the five compute categories in every pool's queue. */
  computeShares: ComputeShares;
  /** Batch's share decay window: how far back past usage counts against a share (0 = only what runs now). */
  computeShareDecaySeconds: number;
  computePools: Record<ComputePool, ComputePoolSettings>;
  /**
   * A job RUNNABLE this long (no capacity fits it, e.g. a GPU family without quota) is cancelled by the job queue's
   * time-limit action and reported; Batch allows 600–86,400 s. Locally: a job of a pool with `localMaxConcurrency` 0.
   */
  runnableTimeLimitSeconds: number;
  /** Egress of the Batch jobs to model endpoints besides HTTPS (443), which is always allowed. */
  modelEndpointEgress: ModelEndpointEgress[];
  /**
   * Blob prefixes (ending in `/`) that rollout jobs may read besides their own (`sweeps/`, `evals/`, `forge/suites/`):
   * where checkpoint weights (`artifactKey`) and suites' task files (`tasks: { kind: 'blobs', prefix }`) are kept. A
   * checkpoint or suite stored elsewhere is unreadable by the rollout job on AWS
   * (`lib/rollout/infra/rollout-job-access.ts`).
   */
  jobReadPrefixes: string[];
  sweeps: SweepSettings;
  /** Judge model prices (none by default: list the incumbent judges' models, e.g. `{ prefix: 'bedrock:', usdPerVerdict: 0.002 }`). */
  judges: JudgeSettings;
  /**
   * The per-stage sweep schedule (EventBridge Scheduler; locally the runtime's timer, off with FLYWHEEL_SCHEDULE=off):
   * a cron expression in Scheduler's syntax `cron(min hour day-of-month month day-of-week year)` and its time zone.
   */
  sweepSchedule: { expression: string; timezone: string; enabled: boolean };
  experiments: ExperimentSettings;
  /** Notices (`lib/people/notices/`): quiet hours and the stall windows of watched runs. */
  notices: NoticeSettings;
}

/** When notices wait and when a watched run counts as stalled (`lib/people/notices/`, `lib/people/heartbeats/`). */
export interface NoticeSettings {
  /** `info`/`warning` notices raised inside these hours wait until they end (`alert` never waits); off when absent. */
  quietHours?: { start: string; end: string; timeZone: string };
  /** Minutes without a heartbeat after which a watched run of each kind is reported stalled. */
  stallWindowsMinutes: { sweep: number; training: number; derivation: number; job: number };
}

/** The experiments' schedule and defaults (`lib/experiments/schedule/`, `lib/experiments/proposals/`). */
export interface ExperimentSettings {
  /**
   * When every running experiment is analysed and acted on (a guardrail breach or SRM stops the arm, a held ramp step
   * widens): Scheduler's `cron(...)` syntax; locally the runtime's timer, off with FLYWHEEL_SCHEDULE=off.
   */
  schedule: { expression: string; timezone: string; enabled: boolean };
  /** Units per arm a proposed experiment (from a training run) plans for, until a person sets a power calculation. */
  proposalUnitsPerArm: number;
  /** Whether the schedule's notices go to people (log always; Slack when FLYWHEEL_SLACK_WEBHOOK_URL is set). */
  notify: boolean;
}

const base: Omit<StageSettings, 'stage'> = {
  retainData: false,
  logRetentionDays: 14,
  rawArchiveInfrequentAccessDays: 30,
  rawArchiveExpireDays: 365,
  noncurrentVersionDays: 30,
  deadLetterRetentionDays: 14,
  maxReceiveCount: 5,
  api: { rateLimit: 500, burstLimit: 1000, dailyQuota: 0, waf: { requestsPerIpPer5Minutes: 30_000, keylessRequestsPerIpPer5Minutes: 300 } },
  alarms: {
    emails: [],
    deadLetterDepthThreshold: 1,
    handlerErrorThreshold: 5,
    // Ingest: the processor drains within seconds; 15 minutes is a stopped consumer. Modes: the queue rides out a judge
    // endpoint that is down, so an hour. Dead letters: 3 days, leaving 11 of the 14 days' retention to redrive.
    queueAgeSeconds: { ingest: 900, modes: 3600, deadLetter: 3 * 86_400 },
  },
  notifications: {},
  // Evaluation and training carry the loop; research is best effort; inference (serving experiments) is small.
  computeShares: { inference: 1, training: 3, 'data-and-reward': 2, evaluation: 3, research: 1 },
  computeShareDecaySeconds: 3600,
  computePools: {
    gpu: { instanceTypes: ['g6', 'g6e'], maxvCpus: 192, localMaxConcurrency: 2 },
    cpu: { instanceTypes: ['c7i', 'm7i'], maxvCpus: 256, localMaxConcurrency: 4 },
  },
  runnableTimeLimitSeconds: 3600,
  modelEndpointEgress: [],
  jobReadPrefixes: ['checkpoints/', 'weights/', 'suites/', 'tasks/'],
  sweeps: { saturationThreshold: 0.9, shardMaxTasks: 50, tasksPerChild: 10, attemptsPerTask: 1 },
  judges: { pricing: [] },
  // Nightly at 02:00 UTC over the active suites and the newest checkpoints.
  sweepSchedule: { expression: 'cron(0 2 * * ? *)', timezone: 'UTC', enabled: true },
  // Every 15 minutes: a guardrail breach stops its arm within a quarter of an hour of the data that shows it.
  experiments: { schedule: { expression: 'cron(0/15 * * * ? *)', timezone: 'UTC', enabled: true }, proposalUnitsPerArm: 5000, notify: true },
  // A sweep beats per shard done (shards run in parallel, each under an hour); a derivation per step, and one step
  // waits for a trainer job (distillation: hours). Training runs keep their own stallMinutes (lib/training/runs/).
  notices: { stallWindowsMinutes: { sweep: 90, training: 60, derivation: 180, job: 60 } },
};

export const STAGES: Record<StageName, StageSettings> = {
  local: {
    ...base,
    stage: 'local',
    api: { rateLimit: 100_000, burstLimit: 200_000, dailyQuota: 0, waf: base.api.waf },
    runnableTimeLimitSeconds: 600,
  },
  dev: {
    ...base,
    stage: 'dev',
    // vLLM / SGLang servers brought up by hand next to the jobs: the VPC's own range (CDK's default 10.0.0.0/16),
    // on vLLM's default port. Prod lists none: its endpoints answer HTTPS.
    modelEndpointEgress: [{ cidr: '10.0.0.0/16', port: 8000, description: 'vLLM/SGLang endpoints inside the VPC on port 8000 (dev)' }],
  },
  prod: {
    ...base,
    stage: 'prod',
    retainData: true,
    logRetentionDays: 90,
    rawArchiveExpireDays: 0,
    noncurrentVersionDays: 90,
    // 120,000 per 5 minutes is the stage throttle (2,000/s) from one address for a minute: a batch uploader on one
    // NAT address fits, a flood from one address does not.
    api: { rateLimit: 2000, burstLimit: 4000, dailyQuota: 0, waf: { requestsPerIpPer5Minutes: 120_000, keylessRequestsPerIpPer5Minutes: 300 } },
    alarms: { ...base.alarms, handlerErrorThreshold: 1, queueAgeSeconds: { ingest: 600, modes: 3600, deadLetter: 3 * 86_400 } },
    computeShares: { inference: 2, training: 4, 'data-and-reward': 2, evaluation: 3, research: 1 },
    computeShareDecaySeconds: 14_400,
    computePools: {
      gpu: { instanceTypes: ['g6e', 'p5'], maxvCpus: 1536, localMaxConcurrency: 2 },
      cpu: { instanceTypes: ['c7i', 'm7i'], maxvCpus: 1024, localMaxConcurrency: 4 },
    },
    runnableTimeLimitSeconds: 14_400,
  },
};

/** The settings of a stage; throws with the valid names when the stage is unknown. */
export function getStageSettings(stage: string): StageSettings {
  if (!(stage in STAGES)) {
    throw new Error(`Unknown stage "${stage}": expected one of ${Object.keys(STAGES).join(', ')}`);
  }
  return STAGES[stage as StageName];
}
