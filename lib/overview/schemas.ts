/**
 * The loop overview (`GET /v1/overview`, the console's first page and the Slack bot's `/flywheel status`): the state
 * of each part of the loop in one bounded answer. Counts come from indexes and day rollups, never from a scan of
 * everything (`get-loop-overview.ts` says what each reads).
 */
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

/** Items of each "recent" list at most. */
export const OVERVIEW_RECENT = 5;
/** Items counted at most for a count (checkpoints, pending reviews); above it the count says it is capped. */
export const OVERVIEW_COUNT_CAP = 5000;

export const FeedbackWindowSchema = z
  .object({
    events: z.number().int(),
    up: z.number().int(),
    down: z.number().int(),
    /** down / (up + down); null when no event had a rating. */
    negativeShare: z.number().nullable(),
  })
  .openapi('FeedbackWindow');
export type FeedbackWindow = z.infer<typeof FeedbackWindowSchema>;

export const LoopOverviewSchema = z
  .object({
    generatedAt: z.string(),
    feedback: z.object({ last24h: FeedbackWindowSchema, last7d: FeedbackWindowSchema }),
    failureModes: z.object({
      /** Modes with at least one signal in the last 7 days. */
      open: z.number().int(),
      /** Most frequent modes over the last 7 days, every checkpoint together. */
      top: z.array(z.object({ mode: z.string(), count: z.number().int() })),
      /** Signals waiting for a person in the review queue, counted up to `OVERVIEW_COUNT_CAP` (`pendingReviewCapped` then). */
      pendingReview: z.number().int(),
      pendingReviewCapped: z.boolean(),
    }),
    checkpoints: z.object({
      /** Counted up to `OVERVIEW_COUNT_CAP` (`totalCapped` then). */
      total: z.number().int(),
      totalCapped: z.boolean(),
      /** The registry's incumbent (the checkpoint to beat), when set. */
      incumbent: z.object({ checkpoint: z.string(), since: z.string() }).nullable(),
      latest: z.object({ id: z.string(), model: z.string(), registeredAt: z.string() }).nullable(),
    }),
    sweeps: z.object({
      running: z.array(z.object({ sweepId: z.string(), status: z.string(), requestedAt: z.string() })),
      recent: z.array(z.object({ sweepId: z.string(), status: z.string(), requestedAt: z.string(), finishedAt: z.string().optional() })),
    }),
    suites: z.object({ active: z.number().int(), saturated: z.number().int() }),
    trainingRuns: z.object({
      /** Not finished (queued, building the dataset, training, registering, evaluating), newest first. */
      running: z.array(z.object({ runId: z.string(), status: z.string(), createdAt: z.string(), step: z.number().int().optional() })),
      recent: z.array(z.object({ runId: z.string(), status: z.string(), createdAt: z.string(), step: z.number().int().optional() })),
    }),
    experiments: z.object({ running: z.array(z.object({ experimentId: z.string(), name: z.string(), startedAt: z.string().optional() })) }),
    notices: z
      .object({
        /** Open notices (counted up to 200). */
        open: z.number().int(),
        /** Open notices that ask for a decision (they have actions). */
        decisions: z.number().int(),
        recent: z.array(z.object({ noticeId: z.string(), kind: z.string(), severity: z.string(), title: z.string(), createdAt: z.string() })),
      })
      .openapi({ description: 'Empty when the notices capability is not there.' }),
  })
  .openapi('LoopOverview');
export type LoopOverview = z.infer<typeof LoopOverviewSchema>;

/** `GET /v1/overview` takes no query. */
export const LoopOverviewQuery = z.strictObject({}).openapi('LoopOverviewQuery');
