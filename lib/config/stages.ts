/**
 * Typed per-stage settings, chosen with `-c stage=dev|prod` (CDK) or `--stage` (CLI). The local runtime uses `local`.
 * Every number that differs between stages lives here, so a change of policy is one reviewed diff.
 */
export type StageName = 'local' | 'dev' | 'prod';

export interface ApiThrottle {
  /** Steady-state requests per second per API key (usage plan) and per stage. */
  rateLimit: number;
  /** Bucket size: requests allowed at once above the steady rate. */
  burstLimit: number;
  /** Requests per key per day; 0 means no quota. */
  dailyQuota: number;
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
    /** Email addresses subscribed to the alarm topic; Slack comes through the same topic later. */
    emails: string[];
    /** Dead-letter queue depth that raises the alarm. */
    deadLetterDepthThreshold: number;
    /** Handler errors in 5 minutes that raise the alarm. */
    handlerErrorThreshold: number;
  };
}

const base: Omit<StageSettings, 'stage'> = {
  retainData: false,
  logRetentionDays: 14,
  rawArchiveInfrequentAccessDays: 30,
  rawArchiveExpireDays: 365,
  noncurrentVersionDays: 30,
  deadLetterRetentionDays: 14,
  maxReceiveCount: 5,
  api: { rateLimit: 500, burstLimit: 1000, dailyQuota: 0 },
  alarms: { emails: [], deadLetterDepthThreshold: 1, handlerErrorThreshold: 5 },
};

export const STAGES: Record<StageName, StageSettings> = {
  local: { ...base, stage: 'local', api: { rateLimit: 100_000, burstLimit: 200_000, dailyQuota: 0 } },
  dev: { ...base, stage: 'dev' },
  prod: {
    ...base,
    stage: 'prod',
    retainData: true,
    logRetentionDays: 90,
    rawArchiveExpireDays: 0,
    noncurrentVersionDays: 90,
    api: { rateLimit: 2000, burstLimit: 4000, dailyQuota: 0 },
    alarms: { emails: [], deadLetterDepthThreshold: 1, handlerErrorThreshold: 1 },
  },
};

/** The settings of a stage; throws with the valid names when the stage is unknown. */
export function getStageSettings(stage: string): StageSettings {
  if (!(stage in STAGES)) {
    throw new Error(`Unknown stage "${stage}": expected one of ${Object.keys(STAGES).join(', ')}`);
  }
  return STAGES[stage as StageName];
}
