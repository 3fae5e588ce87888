/**
 * Environment images on AWS Batch (moto_server): a submission naming a task's image runs under a job definition
 * cloned from the named definition with the image replaced, registered once per image and base revision.
 */
import { BatchClient, DescribeJobDefinitionsCommand, DescribeJobsCommand, RegisterJobDefinitionCommand } from '@aws-sdk/client-batch';
import { beforeAll, describe, expect, it } from 'vitest';
import { BATCH_TAGS, BatchJobs, ENVIRONMENT_IMAGE_VARIABLE, imageDefinitionName } from '../../lib/drivers/aws/batch-jobs.ts';
import { motoClients } from '../support/aws-test-resources.ts';
import { createBatchTestResources, type BatchTestResources } from './jobs-moto-resources.ts';

const aws = motoClients();
let r: BatchTestResources;
const SWE_IMAGE = 'swebench/sweb.eval.x86_64.django_1776_django-11099:latest';

function driver() {
  const batch = new BatchClient({ endpoint: aws.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } });
  const sent: Array<{ operation: string; body: Record<string, unknown> }> = [];
  batch.middlewareStack.add(
    (next, context) => async (args) => {
      const raw = (args.request as { body?: unknown }).body;
      const text = typeof raw === 'string' ? raw : raw instanceof Uint8Array ? new TextDecoder().decode(raw) : '';
      if (text !== '') sent.push({ operation: String(context.commandName), body: JSON.parse(text) });
      return next(args);
    },
    { step: 'build', name: 'flywheelRecordWire' },
  );
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
