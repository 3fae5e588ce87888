/**
 * The registry's data: checkpoints (and the models they belong to), suites and results. zod 4 schemas that validate
 * the API's requests AND produce its OpenAPI document (`lib/registry/http/operations.ts`), so the two never drift.
 *
 * Identifiers end up inside record keys (`CHECKPOINT#<id>`, `RESULT#<sweep>`, `<checkpoint>#<suite>#<mode>`): no `#`,
 * no whitespace; the charset of a URL path segment plus `:` `@` `/`, so a Hugging Face style `org/name:step-100` works.
 */
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { HarnessModeSchema } from '../harness/task/harness-mode.ts';
import { DEFAULT_VLLM_PORT, VllmPortSchema } from '../rollout/vllm-port.ts';
import { boundedJson } from '../shared/json-bounds.ts';

/** Bytes of a checkpoint's free `metadata` JSON, under the 64 KiB body (its depth is bounded too: `FREE_JSON_MAX_DEPTH`). */
export const CHECKPOINT_METADATA_MAX_BYTES = 32 * 1024;

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

/**
 * The harness mode (`lib/harness/task/harness-mode.ts`) as the API documents it: one `HarnessMode` component. A clone,
 * because zod gives `.openapi` only to schemas made after `extendZodWithOpenApi`, and the harness's is made before.
 */
export const HarnessModeComponent = HarnessModeSchema.clone().openapi('HarnessMode');

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
        .openapi({
          example: 'openai:coder-7b@https://models.internal.example.com/v1',
          description: "On AWS a rollout job reaches HTTPS (443) anywhere; another port only when the stage's `modelEndpointEgress` lists it.",
        }),
    }),
    z.object({
      kind: z.literal('vllm'),
      /** Name the server answers to (`--served-model-name`); default the checkpoint id. */
      servedModelName: z.string().min(1).optional(),
      /** Extra `vllm serve` arguments, e.g. `--max-model-len 32768`, `--tensor-parallel-size 1`. */
      args: z.array(z.string()).default([]),
      port: VllmPortSchema.default(DEFAULT_VLLM_PORT),
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
    /** The new top model: its `checkpoint.registered` event starts a judge derivation (`lib/judges/workflow/`); default false. */
    topModel: z.boolean().default(false),
    metadata: z.record(z.string(), z.unknown()).superRefine(boundedJson({ maxBytes: CHECKPOINT_METADATA_MAX_BYTES })).default({}),
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

/** `GET /v1/checkpoints/{id}`. */
export const CheckpointIdParams = z.object({ id: RegistryId });

/** A sweep a registration started (through the `checkpoint.registered` trigger), by the id the trigger gives it. */
export const StartedSweepView = z
  .object({
    sweepId: z.string().openapi({ description: 'The sweep id the trigger derives from the checkpoint id (`GET /v1/sweeps/{id}` follows it).', example: 'checkpoint-coder-7b-step-1200-1a2b3c4d' }),
    suites: z.array(z.string()).openapi({ description: 'The suites it covers: the active suites when the checkpoint was registered.' }),
  })
  .openapi('StartedSweep');
export type StartedSweep = z.infer<typeof StartedSweepView>;

export const RegisterCheckpointResult = z
  .object({
    checkpoint: CheckpointView,
    created: z.boolean().openapi({ description: 'False when the same checkpoint was already registered (idempotent retry).' }),
    sweeps: z.array(StartedSweepView).openapi({
      description: 'The sweep the registration starts (none with `sweep: false`, or when no suite is active); a retry names the same sweep, which runs once.',
    }),
  })
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
    /**
     * Omitted: 1 for a new id, the stored version when nothing changed (an idempotent retry), the next version when
     * anything changed. Given: a version's content never changes, so it must be higher than the stored one (or the
     * same, with the same content).
     */
    version: z
      .number()
      .int()
      .min(1)
      .optional()
      .openapi({ description: 'Omit to get 1 for a new suite, the next version when the content changed, the same one when it did not.' }),
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
    /** Why it was retired (`POST /v1/suites/{id}/retire`), and by whom when given. */
    retiredReason: z.string().optional(),
    retiredBy: z.string().optional(),
    /** Days from creation to saturation: the suite's useful life (evals' half-life, per suite). */
    usefulLifeDays: z.number().optional(),
    /** The best strict score seen and who reached it. */
    best: z.object({ score: z.number(), checkpoint: z.string(), sweepId: z.string(), at: IsoDateTime }).optional(),
  })
  .openapi('Suite');
/** A suite with its task ids (the API view leaves them out), and the sweep that marked it saturated, when one did. */
export type Suite = z.infer<typeof SuiteView> & { taskIds: string[]; saturatedBySweep?: string };

export const ListSuitesQuery = z.object({ status: SuiteStatusSchema.optional() }).strict();
export const SuiteList = z.object({ items: z.array(SuiteView) }).openapi('SuiteList');

/** `POST /v1/suites` answers the registered version (without its task ids) and whether this call wrote it. */
export const RegisterSuiteResult = z
  .object({
    suite: SuiteView,
    created: z.boolean().openapi({ description: 'False when this version was already registered with the same content (an idempotent retry).' }),
    previousVersion: z.number().int().optional().openapi({ description: 'The version this one replaced.' }),
  })
  .openapi('RegisterSuiteResult');

export const SuiteIdParams = z.object({ id: RegistryId });

/** `POST /v1/suites/{id}/retire`. */
export const RetireSuiteInput = z
  .object({
    reason: z.string().trim().min(1, 'say why the suite is retired').max(2000),
    /** Who retires it (a person or a service), kept beside the reason. */
    by: z.string().min(1).max(200).optional(),
  })
  .strict()
  .openapi('RetireSuiteInput');

export const RetireSuiteResult = z
  .object({
    suite: SuiteView,
    changed: z.boolean().openapi({ description: 'False when the suite was already retired: the first retirement (time, reason) is kept.' }),
  })
  .openapi('RetireSuiteResult');

/** One point of a suite's best-score series: the best strict score of one sweep on the suite (check-saturation writes it). */
export const SuiteBestPointView = z
  .object({
    at: IsoDateTime.openapi({ description: 'When the sweep was requested (the time axis of results).' }),
    sweepId: z.string(),
    checkpoint: z.string(),
    score: z.number(),
    suiteVersion: z.number().int(),
  })
  .openapi('SuiteBestPoint');
export type SuiteBestPoint = z.infer<typeof SuiteBestPointView>;

export const GetSuiteQuery = z
  .object({ points: z.coerce.number().int().min(1).max(10_000).default(1000).openapi({ description: 'How many of the newest best-score points to return.' }) })
  .strict();

/** `GET /v1/suites/{id}`: the suite, its useful life so far, and its best strict score over time (oldest first). */
export const SuiteDetailView = SuiteView.extend({
  usefulLife: z
    .object({
      startedAt: IsoDateTime,
      endedAt: IsoDateTime.optional(),
      endedBy: z.enum(['saturation', 'retirement']).optional(),
      days: z.number().openapi({ description: 'Days from creation to saturation (or retirement when it never saturated); to now while it is still useful.' }),
    })
    .openapi({ description: 'Creation of this version → saturation: how long the suite separated checkpoints.' }),
  bestScores: z.array(SuiteBestPointView).openapi({ description: 'Per sweep, the best strict score on the suite: oldest first.' }),
}).openapi('SuiteDetail');
export type SuiteDetail = z.infer<typeof SuiteDetailView>;

/** A 95% confidence interval. */
export const IntervalSchema = z.object({ low: z.number(), high: z.number() }).openapi('Interval');

/** One result row: a sweep × checkpoint × suite × mode. */
export const ResultView = z
  .object({
    sweepId: z.string(),
    checkpoint: z.string(),
    suite: z.string(),
    suiteVersion: z.number().int(),
    mode: HarnessModeComponent,
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
    mode: HarnessModeComponent.optional(),
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
