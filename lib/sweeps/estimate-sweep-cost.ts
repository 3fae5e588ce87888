/**
 * The AWS cost of a sweep from a small cost model (docs/cost-model.md): Lambda (GB-seconds and requests), Step
 * Functions Standard (state transitions), AWS Batch GPU instance hours (Batch itself is free; the EC2 instances are
 * not), S3 requests and DynamoDB on-demand request units. Every price is a parameter: `DEFAULT_PRICES` are us-east-1
 * list prices, to be checked against the AWS price list of the region in use.
 */
import { COMPUTE_PRICES } from '../compute/prices.ts';

export interface Prices {
  /** USD per GB-second, Lambda on Arm (the house function's architecture). */
  lambdaGbSecond: number;
  /** USD per Lambda request. */
  lambdaRequest: number;
  /** USD per Step Functions Standard state transition. */
  stepFunctionsTransition: number;
  /** USD per hour of the GPU instance a rollout child runs on (on-demand). */
  gpuInstanceHour: number;
  gpuInstanceType: string;
  s3Put: number;
  s3Get: number;
  /** USD per DynamoDB on-demand write / read request unit. */
  dynamoWriteUnit: number;
  dynamoReadUnit: number;
}

export const DEFAULT_PRICES: Prices = {
  lambdaGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1_000_000,
  stepFunctionsTransition: 0.025 / 1000,
  // The smallest size of the stages' GPU families (g6, g6e) that holds a rollout child (8 vCPU, 30 GiB, 1 GPU):
  // g6.2xlarge, one L4, from compute's one price table (lib/compute/prices.ts), which usage accounting reads too.
  gpuInstanceHour: COMPUTE_PRICES.gpuInstanceHourUsd,
  gpuInstanceType: COMPUTE_PRICES.gpuInstanceType,
  s3Put: 0.005 / 1000,
  s3Get: 0.0004 / 1000,
  dynamoWriteUnit: 0.625 / 1_000_000,
  dynamoReadUnit: 0.125 / 1_000_000,
};

export interface SweepUsage {
  /** Lambda step invocations: their billed duration (ms, rounded up to 1 ms by Lambda) and memory. */
  lambda: Array<{ durationMs: number; memoryMb: number }>;
  stateTransitions: number;
  /** Tasks each array child runs (one entry per child, over every shard). */
  childTasks: number[];
  attemptsPerTask: number;
  /** Seconds one attempt takes on the GPU node (agent loop + tests). */
  attemptSeconds: number;
  /** Seconds a child spends before its first attempt (instance boot share, image pull, vLLM load). */
  childStartupSeconds: number;
  s3Puts: number;
  s3Gets: number;
  dynamoWriteUnits: number;
  dynamoReadUnits: number;
}

export interface SweepCost {
  lambda: { gbSeconds: number; requests: number; usd: number };
  stepFunctions: { transitions: number; usd: number };
  batch: { instanceHours: number; usd: number; instanceType: string };
  s3: { puts: number; gets: number; usd: number };
  dynamodb: { writeUnits: number; readUnits: number; usd: number };
  totalUsd: number;
  /** Everything but the GPU hours: what orchestration costs. */
  orchestrationUsd: number;
}

/**
 * @example
 * const cost = estimateSweepCost({ lambda: [{ durationMs: 120, memoryMb: 512 }], stateTransitions: 150, childTasks: [10, 10],
 *   attemptsPerTask: 1, attemptSeconds: 300, childStartupSeconds: 180, s3Puts: 50, s3Gets: 50, dynamoWriteUnits: 100, dynamoReadUnits: 100 });
 */
export function estimateSweepCost(usage: SweepUsage, prices: Prices = DEFAULT_PRICES): SweepCost {
  const gbSeconds = usage.lambda.reduce((a, l) => a + (Math.ceil(l.durationMs) / 1000) * (l.memoryMb / 1024), 0);
  const requests = usage.lambda.length;
  const lambdaUsd = gbSeconds * prices.lambdaGbSecond + requests * prices.lambdaRequest;
  const sfnUsd = usage.stateTransitions * prices.stepFunctionsTransition;
  const instanceSeconds = usage.childTasks.reduce((a, tasks) => a + usage.childStartupSeconds + tasks * usage.attemptsPerTask * usage.attemptSeconds, 0);
  const instanceHours = instanceSeconds / 3600;
  const batchUsd = instanceHours * prices.gpuInstanceHour;
  const s3Usd = usage.s3Puts * prices.s3Put + usage.s3Gets * prices.s3Get;
  const ddbUsd = usage.dynamoWriteUnits * prices.dynamoWriteUnit + usage.dynamoReadUnits * prices.dynamoReadUnit;
  const orchestrationUsd = lambdaUsd + sfnUsd + s3Usd + ddbUsd;
  return {
    lambda: { gbSeconds, requests, usd: lambdaUsd },
    stepFunctions: { transitions: usage.stateTransitions, usd: sfnUsd },
    batch: { instanceHours, usd: batchUsd, instanceType: prices.gpuInstanceType },
    s3: { puts: usage.s3Puts, gets: usage.s3Gets, usd: s3Usd },
    dynamodb: { writeUnits: usage.dynamoWriteUnits, readUnits: usage.dynamoReadUnits, usd: ddbUsd },
    totalUsd: orchestrationUsd + batchUsd,
    orchestrationUsd,
  };
}
