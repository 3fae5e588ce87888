/**
 * `GET /v1/sweeps/{id}/shards`: the progress of each shard of a sweep, for `flywheel sweep status --watch` (zod: the
 * same schema documents the answer).
 */
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { HarnessModeComponent } from '../registry/schemas.ts';

extendZodWithOpenApi(z);

export const ShardProgressView = z
  .object({
    shardId: z.string(),
    checkpoint: z.string(),
    suite: z.string(),
    mode: HarnessModeComponent,
    status: z.enum(['pending', 'running', 'succeeded', 'failed']).openapi({
      description: '`pending`: no attempt recorded yet; `running`: attempts are being recorded; `succeeded`/`failed`: the shard was aggregated (or its failure recorded).',
    }),
    done: z.number().int().openapi({ description: 'Attempts recorded (every task × attempt of the shard counts one).' }),
    total: z.number().int().openapi({ description: 'Attempts the shard runs: its tasks × attempts per task.' }),
    tasks: z.number().int(),
    startedAt: z.string().optional().openapi({ description: 'When its first attempt started.' }),
    finishedAt: z.string().optional().openapi({ description: 'When it was aggregated (or failed).' }),
    elapsedSeconds: z.number().optional().openapi({ description: 'From its first attempt to its end (or to now while it runs).' }),
    error: z.string().optional(),
  })
  .openapi('ShardProgress');
export type ShardProgress = z.infer<typeof ShardProgressView>;

export const SweepProgressView = z
  .object({
    sweepId: z.string(),
    planned: z.boolean().openapi({ description: 'False until plan-shards has cut the sweep into shards (then `shards` is empty).' }),
    shards: z.array(ShardProgressView),
  })
  .openapi('SweepProgress');
export type SweepProgress = z.infer<typeof SweepProgressView>;
