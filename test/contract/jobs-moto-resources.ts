/**
 * AWS Batch resources in the shared moto_server for the jobs driver's tests: an IAM service role (created over
 * IAM's query protocol with fetch, as the repo carries no IAM client), an UNMANAGED compute environment, a
 * fair-share scheduling policy with the local stage's weights, one job queue per pool, and job definitions.
 *
 * moto 5.2.1's Batch runs jobs in Docker unless its config says `batch.use_docker: false`; with Docker absent
 * (as here and in CI) a job would just go FAILED when its thread cannot reach a daemon. The simple backend
 * (`moto/batch_simple`) runs nothing and marks every job (and every array child) SUCCEEDED inside SubmitJob.
 * `useSimpleBatch` switches the server to it through `POST /moto-api/config`; it touches only Batch.
 */
import { BatchClient, CreateComputeEnvironmentCommand, CreateJobQueueCommand, CreateSchedulingPolicyCommand, RegisterJobDefinitionCommand } from '@aws-sdk/client-batch';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { batchWeightFactors } from '../../lib/compute/batch-weight-factors.ts';
import { STAGES } from '../../lib/config/stages.ts';
import { COMPUTE_CATEGORIES, type ComputePool } from '../../lib/ports/jobs.ts';
import { motoEndpoint, uniqueName } from '../support/aws-test-resources.ts';

export interface BatchTestResources {
  batch: BatchClient;
  logs: CloudWatchLogsClient;
  queues: Record<ComputePool, string>;
  queueArns: Record<ComputePool, string>;
  /** Flywheel name → Batch job definition name. */
  definitions: Record<string, string>;
  /** The registered command of each definition. */
  commands: Record<string, string[]>;
}

const config = (endpoint: string) => ({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } });

export async function useSimpleBatch(endpoint: string = motoEndpoint()): Promise<void> {
  const response = await fetch(`${endpoint}/moto-api/config`, { method: 'POST', body: JSON.stringify({ batch: { use_docker: false } }) });
  if (response.status !== 201) throw new Error(`moto config: HTTP ${response.status}`);
}

async function createRole(endpoint: string, name: string): Promise<string> {
  const body = new URLSearchParams({ Action: 'CreateRole', Version: '2010-05-08', RoleName: name, AssumeRolePolicyDocument: '{"Version":"2012-10-17","Statement":[]}' });
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0' },
    body,
  });
  const text = await response.text();
  const arn = /<Arn>([^<]+)<\/Arn>/.exec(text)?.[1];
  if (!arn) throw new Error(`CreateRole failed: ${text.slice(0, 300)}`);
  return arn;
}

export async function createBatchTestResources(endpoint: string = motoEndpoint()): Promise<BatchTestResources> {
  await useSimpleBatch(endpoint);
  const batch = new BatchClient(config(endpoint));
  const logs = new CloudWatchLogsClient(config(endpoint));
  const prefix = uniqueName('fw');
  const role = await createRole(endpoint, `${prefix}-batch-service`);
  const env = await batch.send(new CreateComputeEnvironmentCommand({ computeEnvironmentName: `${prefix}-ce`, type: 'UNMANAGED', state: 'ENABLED', serviceRole: role }));
  const factors = batchWeightFactors(STAGES.local.computeShares);
  const policy = await batch.send(
    new CreateSchedulingPolicyCommand({ name: `${prefix}-fair-share`, fairsharePolicy: { shareDecaySeconds: 3600, shareDistribution: COMPUTE_CATEGORIES.map((c) => ({ shareIdentifier: c, weightFactor: factors[c] })) } }),
  );
  const queues = {} as Record<ComputePool, string>;
  const queueArns = {} as Record<ComputePool, string>;
  for (const pool of ['gpu', 'cpu'] as const) {
    const q = await batch.send(
      new CreateJobQueueCommand({
        jobQueueName: `${prefix}-${pool}`,
        state: 'ENABLED',
        priority: 1,
        schedulingPolicyArn: policy.arn,
        computeEnvironmentOrder: [{ order: 1, computeEnvironment: env.computeEnvironmentArn! }],
      }),
    );
    queues[pool] = q.jobQueueName!;
    queueArns[pool] = q.jobQueueArn!;
  }
  const commands: Record<string, string[]> = { ok: ['node', 'batch-images/rollout/entrypoint.ts'], other: ['true'] };
  const definitions: Record<string, string> = {};
  for (const [name, command] of Object.entries(commands)) {
    const def = await batch.send(
      new RegisterJobDefinitionCommand({
        jobDefinitionName: `${prefix}-${name}`,
        type: 'container',
        containerProperties: { image: 'flywheel/rollout:test', command, resourceRequirements: [{ type: 'VCPU', value: '1' }, { type: 'MEMORY', value: '512' }], privileged: true },
      }),
    );
    definitions[name] = def.jobDefinitionName!;
  }
  return { batch, logs, queues, queueArns, definitions, commands };
}
