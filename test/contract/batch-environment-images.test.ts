/**
 * Environment images on AWS Batch (moto_server): a submission naming a task's image runs under a job definition
 * cloned from the named definition with the image replaced, registered once per image and base revision; the
 * sweep's plan-shards step registers the clones the same way (`BatchImageDefinitions`) and puts their ARNs on the
 * shards the state machine submits.
 */
import { BatchClient, DescribeJobDefinitionsCommand, DescribeJobsCommand, RegisterJobDefinitionCommand } from '@aws-sdk/client-batch';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_TAGS, BatchImageDefinitions, BatchJobs, ENVIRONMENT_IMAGE_VARIABLE, imageDefinitionName } from '../../lib/drivers/aws/batch-jobs.ts';
import { registryKeys } from '../../lib/registry/record-keys.ts';
import { registerSuite } from '../../lib/registry/register-suite.ts';
import { readShardSpec } from '../../lib/sweeps/shard-spec.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { sampleTask } from '../sweeps/support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';
import { motoClients } from '../support/aws-test-resources.ts';
import { createBatchTestResources, type BatchTestResources } from './jobs-moto-resources.ts';
import { recordWire } from '../support/record-wire.ts';

const aws = motoClients();
let r: BatchTestResources;
const SWE_IMAGE = 'swebench/sweb.eval.x86_64.django_1776_django-11099:latest';

function driver() {
  const batch = new BatchClient({ endpoint: aws.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } });
  const sent = recordWire(batch);
  return { jobs: new BatchJobs(batch, r.logs, { queues: r.queues, definitions: r.definitions }), sent, batch };
}

const registrations = (sent: Array<{ operation: string; body: Record<string, unknown> }>) => sent.filter((s) => s.operation === 'RegisterJobDefinitionCommand');

beforeAll(async () => {
  r = await createBatchTestResources(aws.endpoint);
});

describe('a job definition per environment image', () => {
  it('registers a clone of the rollout definition with the image replaced, submits to it, and tags the job', async () => {
    const { jobs, sent, batch } = driver();
    const { jobId } = await jobs.submit({ name: 'eval-swe', definition: 'ok', category: 'evaluation', pool: 'gpu', image: SWE_IMAGE, command: ['--shard', '0'], environment: { FLYWHEEL_SHARD_KEY: 'k' } });
    const [register] = registrations(sent);
    const name = imageDefinitionName(r.definitions['ok']!, SWE_IMAGE);
    expect(name).toMatch(/-env-[0-9a-f]{16}$/);
    expect(register!.body).toMatchObject({
      jobDefinitionName: name,
      type: 'container',
      containerProperties: {
        image: SWE_IMAGE,
        command: r.commands['ok'],
        privileged: true,
        resourceRequirements: [{ type: 'VCPU', value: '1' }, { type: 'MEMORY', value: '512' }],
        environment: [{ name: ENVIRONMENT_IMAGE_VARIABLE, value: SWE_IMAGE }],
      },
      tags: { [BATCH_TAGS.environmentImage]: SWE_IMAGE },
    });
    const submit = sent.find((s) => s.operation === 'SubmitJobCommand')!.body;
    expect(submit['jobDefinition']).toMatch(new RegExp(`:job-definition/${name}:1$`));
    // The definition's command plus the job's arguments, as without an image.
    expect((submit['containerOverrides'] as { command: string[] }).command).toEqual([...r.commands['ok']!, '--shard', '0']);
    expect((submit['tags'] as Record<string, string>)[BATCH_TAGS.environmentImage]).toBe(SWE_IMAGE);
    const described = await jobs.describe(jobId);
    expect(described).toMatchObject({ definition: 'ok', image: SWE_IMAGE });
    const [job] = (await batch.send(new DescribeJobsCommand({ jobs: [jobId] }))).jobs ?? [];
    // moto's simple backend keeps the job's definition (it fills no container details): the clone, by ARN.
    expect(job?.jobDefinition).toMatch(new RegExp(`:job-definition/${name}:1$`));
  });

  it('is registered once: other drivers and later submissions of the same image reuse it; another image gets its own', async () => {
    const first = driver();
    await first.jobs.submit({ name: 'a1', definition: 'ok', category: 'evaluation', pool: 'gpu', image: 'ghcr.io/acme/env:1' });
    await first.jobs.submit({ name: 'a2', definition: 'ok', category: 'evaluation', pool: 'gpu', image: 'ghcr.io/acme/env:1' });
    expect(registrations(first.sent)).toHaveLength(1);
    const second = driver();
    await second.jobs.submit({ name: 'a3', definition: 'ok', category: 'evaluation', pool: 'gpu', image: 'ghcr.io/acme/env:1' });
    expect(registrations(second.sent)).toHaveLength(0);
    await second.jobs.submit({ name: 'a4', definition: 'ok', category: 'evaluation', pool: 'gpu', image: 'ghcr.io/acme/env:2' });
    expect(registrations(second.sent).map((s) => s.body['jobDefinitionName'])).toEqual([imageDefinitionName(r.definitions['ok']!, 'ghcr.io/acme/env:2')]);
    // Without an image: the definition itself, nothing registered.
    const plain = driver();
    await plain.jobs.submit({ name: 'a5', definition: 'ok', category: 'evaluation', pool: 'gpu' });
    expect(registrations(plain.sent)).toHaveLength(0);
    expect(plain.sent.find((s) => s.operation === 'SubmitJobCommand')!.body['jobDefinition']).toBe(r.definitions['ok']);
  });

  it('a new revision of the base definition (a new rollout image deployed) is cloned again, once', async () => {
    const { batch } = driver();
    const image = 'ghcr.io/acme/env:redeploy';
    await driver().jobs.submit({ name: 'b1', definition: 'other', category: 'evaluation', pool: 'cpu', image });
    await batch.send(
      new RegisterJobDefinitionCommand({
        jobDefinitionName: r.definitions['other']!,
        type: 'container',
        containerProperties: { image: 'flywheel/rollout:v2', command: ['true', '--v2'], resourceRequirements: [{ type: 'VCPU', value: '1' }, { type: 'MEMORY', value: '512' }] },
      }),
    );
    const after = driver();
    await after.jobs.submit({ name: 'b2', definition: 'other', category: 'evaluation', pool: 'cpu', image });
    await after.jobs.submit({ name: 'b3', definition: 'other', category: 'evaluation', pool: 'cpu', image });
    expect(registrations(after.sent)).toHaveLength(1);
    expect(registrations(after.sent)[0]!.body['containerProperties']).toMatchObject({ image, command: ['true', '--v2'] });
    const name = imageDefinitionName(r.definitions['other']!, image);
    const revisions = (await batch.send(new DescribeJobDefinitionsCommand({ jobDefinitionName: name }))).jobDefinitions ?? [];
    expect(revisions.map((d) => d.revision).sort()).toEqual([1, 2]);
  });

  it('refuses an image that is not an image reference', async () => {
    await expect(driver().jobs.submit({ name: 'c1', definition: 'ok', category: 'evaluation', pool: 'gpu', image: 'not an image; rm -rf /' })).rejects.toThrow(/image: a container image reference/);
  });
});

describe('plan-shards registers the job definitions of a sweep\'s images', () => {
  let fx: SweepFixture | undefined;
  afterEach(() => fx?.close());

  it('one clone per image, found again by a later plan; the image shards carry its ARN, the others none', async () => {
    const images = ['ghcr.io/acme/sweep-env:django', 'ghcr.io/acme/sweep-env:sympy'];
    fx = openSweepFixture({ settings: { shardMaxTasks: 2, tasksPerChild: 2 } });
    await fx.seed({ checkpoints: 1, suites: 0, tasks: 0 });
    const taskIds = ['t0', 't1', 't2', 't3', 't4'];
    // t0, t1: no image; t2, t3: django; t4: sympy.
    const imageOf = (i: number) => (i < 2 ? undefined : images[i < 4 ? 0 : 1]);
    await fx.ports.records.putMany(taskIds.map((id, i) => ({ ...registryKeys.task('swe', id), kind: 'forge-task', task: { ...sampleTask('swe', id), ...(imageOf(i) ? { environment: { image: imageOf(i)! } } : {}) } })));
    await registerSuite(fx.ports, { id: 'swe', visibility: 'public', owner: 'evals', tasks: { kind: 'records' }, taskIds });
    const base = r.definitions['ok']!;
    const plan = async (sweepId: string) => {
      const { sent, batch } = driver();
      const definitions = new BatchImageDefinitions(batch);
      const ports = { ...fx!.ports, imageDefinitions: { forImage: (image: string) => definitions.definitionFor(base, image) } };
      const steps = sweepStepHandlers({ settings: fx!.settings, notify: { log: () => {} } });
      await steps['validate-sweep'](ports, { sweepId, trigger: 'manual', requestedAt: '2026-12-02T10:05:00.000Z', modes: ['strict', 'lenient'] });
      return { plan: await steps['plan-shards'](ports, { sweepId }), sent, batch };
    };

    const first = await plan('aws-img-1');
    expect(registrations(first.sent).map((s) => s.body['jobDefinitionName']).sort()).toEqual(images.map((i) => imageDefinitionName(base, i)).sort());
    const strict = first.plan.shards.filter((s) => s.mode === 'strict');
    expect(strict.map((s) => s.shardId)).toEqual(['c0-s0-strict-0', 'c0-s0-strict-1', 'c0-s0-strict-2']);
    expect(strict[0]!.jobDefinition).toBeUndefined();
    for (const [shard, image] of [[strict[1]!, images[0]!], [strict[2]!, images[1]!]] as const) {
      expect(shard.jobDefinition).toMatch(new RegExp(`:job-definition/${imageDefinitionName(base, image)}:1$`));
      expect((await readShardSpec(fx.ports.blobs, shard.shardKey)).environmentImage).toBe(image);
      // What the state machine will submit to: the clone, running the task's image with the rollout command.
      const [clone] = (await first.batch.send(new DescribeJobDefinitionsCommand({ jobDefinitions: [shard.jobDefinition!] }))).jobDefinitions ?? [];
      expect(clone).toMatchObject({ status: 'ACTIVE', containerProperties: { image, command: r.commands['ok'] }, tags: { [BATCH_TAGS.environmentImage]: image } });
    }

    // Another sweep (another Lambda process) over the same images registers nothing: the clones are found.
    const second = await plan('aws-img-2');
    expect(registrations(second.sent)).toHaveLength(0);
    expect(second.plan.shards.filter((s) => s.mode === 'strict').map((s) => s.jobDefinition ?? null)).toEqual(strict.map((s) => s.jobDefinition ?? null));
  });
});

