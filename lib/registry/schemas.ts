/**
 * The registry's data: checkpoints (and the models they belong to), suites and results. zod 4 schemas that validate
 * the API's requests AND produce its OpenAPI document (`lib/registry/http/operations.ts`), so the two never drift.
 *
 * Identifiers end up inside record keys (`CHECKPOINT#<id>`, `RESULT#<sweep>`, `<checkpoint>#<suite>#<mode>`): no `#`,
 * no whitespace; the charset of a URL path segment plus `:` `@` `/`, so a Hugging Face style `org/name:step-100` works.
 */
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@+=/-]*$/;

/** An id that may sit inside a record key. */
export const RegistryId = z
  .string()
  .min(1)
  .max(200)
  .regex(ID_PATTERN, 'letters, digits and . _ : @ + = / - only (no # or spaces), starting with a letter or digit')
  .openapi({ description: 'Letters, digits and `. _ : @ + = / -`; no `#` or spaces.', example: 'coder-7b:step-1200' });

const IsoDateTime = z.iso.datetime({ offset: true }).openapi({ description: 'ISO 8601 date-time', example: '2026-12-02T10:00:00Z' });

/** Harness modes a sweep may run (`lib/harness/sandbox/sandbox.ts`): strict (history stripped, egress allow-listed) and lenient. */
export const HarnessModeSchema = z.enum(['strict', 'lenient']).openapi('HarnessMode');
export type SweepMode = z.infer<typeof HarnessModeSchema>;

/**
 * How a checkpoint is served to the harness:
 * - `endpoint`: an already running server, as a models-port spec (`openai:<model>@<baseUrl>` or `bedrock:<modelId>`,
 *   see `lib/models/create-model.ts`);
 * - `vllm`: the rollout job starts `vllm serve` beside the harness on its GPU node from the checkpoint's artifact, then
 *   talks to it as `openai:<servedModelName>@http://127.0.0.1:<port>/v1`.
 */
export const ServingSchema = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('endpoint'),
      model: z
        .string()
        .regex(/^(openai:[^@\s]+@https?:\/\/\S+|bedrock:\S+)$/, 'openai:<model>@<http(s) base URL> or bedrock:<modelId>')
        .openapi({ example: 'openai:coder-7b@http://10.0.0.5:8000/v1' }),
    }),
    z.object({
      kind: z.literal('vllm'),
      /** Name the server answers to (`--served-model-name`); default the checkpoint id. */
      servedModelName: z.string().min(1).optional(),
      /** Extra `vllm serve` arguments, e.g. `--max-model-len 32768`, `--tensor-parallel-size 1`. */
      args: z.array(z.string()).default([]),
      port: z.number().int().min(1024).max(65535).default(8000),
      /** GPUs the rollout child asks Batch for. */
      gpus: z.number().int().min(1).max(8).default(1),
    }),
  ])
  .openapi('Serving', { description: 'How the rollout job reaches the checkpoint: a running endpoint, or a vLLM server it starts.' });
export type Serving = z.infer<typeof ServingSchema>;

export const CheckpointStatusSchema = z.enum(['active', 'retired']).openapi('CheckpointStatus', {
  description: 'Retired checkpoints are never incumbents and are left out of `newest` sweeps.',
});

/** `POST /v1/checkpoints`. */
export const CheckpointInput = z
  .object({
    id: RegistryId,
    /** The model family (base model) the checkpoint belongs to. */
    model: RegistryId,
    /** The checkpoint it was trained from (absent for a base model). */
    parent: RegistryId.optional(),
    /** The training run that produced it. */
    trainingRun: z.string().min(1).max(200).optional(),
    /** Blob key of the weights (safetensors folder or tarball) when the platform holds them. */
    artifactKey: z.string().min(1).max(1024).optional(),
    serving: ServingSchema,
    /** Start a sweep on it at once (the workflow's `checkpoint.registered` rule); default true. */
    sweep: z.boolean().default(true),
    metadata: z.record(z.string(), z.unknown()).default({}),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.serving.kind === 'vllm' && !c.artifactKey) {
      ctx.addIssue({ code: 'custom', path: ['artifactKey'], message: 'a vllm-served checkpoint needs the artifactKey of its weights' });
    }
    if (c.parent === c.id) ctx.addIssue({ code: 'custom', path: ['parent'], message: 'a checkpoint cannot be its own parent' });
  })
  .openapi('CheckpointInput');
export type CheckpointInputType = z.input<typeof CheckpointInput>;

export const CheckpointView = z
  .object({
    id: RegistryId,
    model: RegistryId,
    parent: RegistryId.optional(),
    trainingRun: z.string().optional(),
    artifactKey: z.string().optional(),
    serving: ServingSchema,
    status: CheckpointStatusSchema,
    metadata: z.record(z.string(), z.unknown()),
    registeredAt: IsoDateTime,
  })
  .openapi('Checkpoint');
export type Checkpoint = z.infer<typeof CheckpointView>;

export const RegisterCheckpointResult = z
  .object({ checkpoint: CheckpointView, created: z.boolean().openapi({ description: 'False when the same checkpoint was already registered (idempotent retry).' }) })
  .openapi('RegisterCheckpointResult');

export const ListCheckpointsQuery = z
  .object({
    model: RegistryId.optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().max(2048).optional(),
  })
  .strict();

export const CheckpointPage = z.object({ items: z.array(CheckpointView), cursor: z.string().optional() }).openapi('CheckpointPage');

/** Where a suite's tasks are: task records (the forge writes `TASK#<suite>#<id>`), blobs under a prefix, or a folder on this machine. */
export const SuiteTasksSourceSchema = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('records'),
      /** Each task is the record `pk TASK#<suite>#<taskId>`, `sk` this (default `TASK`); its `task` attribute (or the item itself) is the task JSON. */
      sk: z.string().min(1).default('TASK'),
    }),
    z.object({ kind: z.literal('blobs'), prefix: z.string().min(1).regex(/\/$/, 'ends with /') }),
    z.object({ kind: z.literal('folder'), path: z.string().min(1) }),
  ])
  .openapi('SuiteTasksSource', { description: 'Where the tasks are: records, a blob prefix of task JSON files, or a local folder (as `flywheel eval run` loads).' });
export type SuiteTasksSource = z.infer<typeof SuiteTasksSourceSchema>;

export const SuiteStatusSchema = z.enum(['active', 'saturated', 'retired']).openapi('SuiteStatus');
export type SuiteStatus = z.infer<typeof SuiteStatusSchema>;
export const SuiteVisibilitySchema = z.enum(['public', 'private']).openapi('SuiteVisibility', { description: 'private = held out: never shown to training.' });

export const SuiteInput = z
  .object({
    id: RegistryId,
    version: z.number().int().min(1).default(1),
    visibility: SuiteVisibilitySchema,
    owner: z.string().min(1).max(200),
    description: z.string().max(4000).optional(),
    tasks: SuiteTasksSourceSchema,
    /** Task ids in the suite at this version (the shard planner's list); their JSON at most 300,000 bytes. */
    taskIds: z.array(z.string().min(1).max(400)).min(1).max(50_000),
    /** Strict best score at which the suite counts as saturated; default the stage's `sweeps.saturationThreshold`. */
    saturationThreshold: z.number().gt(0).lte(1).optional(),
  })
  .strict()
  .openapi('SuiteInput');
export type SuiteInputType = z.input<typeof SuiteInput>;

export const SuiteView = z
  .object({
    id: RegistryId,
    version: z.number().int(),
    visibility: SuiteVisibilitySchema,
    status: SuiteStatusSchema,
    owner: z.string(),
    description: z.string().optional(),
    tasks: SuiteTasksSourceSchema,
    taskCount: z.number().int(),
    saturationThreshold: z.number().optional(),
    createdAt: IsoDateTime,
    saturatedAt: IsoDateTime.optional(),
    retiredAt: IsoDateTime.optional(),
    /** Days from creation to saturation: the suite's useful life (evals' half-life, per suite). */
    usefulLifeDays: z.number().optional(),
    /** The best strict score seen and who reached it. */
    best: z.object({ score: z.number(), checkpoint: z.string(), sweepId: z.string(), at: IsoDateTime }).optional(),
  })
  .openapi('Suite');
export type Suite = z.infer<typeof SuiteView> & { taskIds: string[] };

export const ListSuitesQuery = z.object({ status: SuiteStatusSchema.optional() }).strict();
export const SuiteList = z.object({ items: z.array(SuiteView) }).openapi('SuiteList');

/** A 95% confidence interval. */
export const IntervalSchema = z.object({ low: z.number(), high: z.number() }).openapi('Interval');

/** One result row: a sweep × checkpoint × suite × mode. */
export const ResultView = z
  .object({
    sweepId: z.string(),
    checkpoint: z.string(),
    suite: z.string(),
    suiteVersion: z.number().int(),
    mode: HarnessModeSchema,
    /** Mean over tasks of each task's pass rate over its scored attempts (pass@1); null when nothing was scored. */
    score: z.number().nullable(),
    /** Tasks with at least one scored attempt. */
    n: z.number().int(),
    /** Tasks planned. */
    tasks: z.number().int(),
    attempts: z.number().int().openapi({ description: 'Scored attempts (passed + failed).' }),
    passes: z.number().int(),
    ungraded: z.number().int(),
    infrastructureErrors: z.number().int(),
    ci: IntervalSchema.nullable(),
    shards: z.number().int().openapi({ description: 'Shards planned for this cell.' }),
    shardsAggregated: z.number().int(),
    shardsFailed: z.number().int(),
    /** The records partitions of the attempts (`EVAL#<runId>`, `sk ATTEMPT#<task>#<mode>#<n>`). */
    attemptsKeys: z.array(z.string()),
    /** When the sweep was requested: the time axis of the series (stable when a cell is re-aggregated). */
    at: IsoDateTime,
    updatedAt: IsoDateTime,
  })
  .openapi('Result');
export type Result = z.infer<typeof ResultView>;

export const ListResultsQuery = z
  .object({
    suite: RegistryId.optional(),
    checkpoint: RegistryId.optional(),
    mode: HarnessModeSchema.optional(),
    sweep: RegistryId.optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
  })
  .strict()
  .superRefine((q, ctx) => {
    if (!q.sweep && !q.suite && !q.checkpoint) {
      ctx.addIssue({ code: 'custom', path: ['suite'], message: 'give suite, checkpoint or sweep (or several)' });
    }
  });
export const ResultList = z.object({ items: z.array(ResultView) }).openapi('ResultList', { description: 'Oldest first: the time series.' });
