/**
 * The sweeps list (`GET /v1/sweeps`): newest first from the `SWEEPS` index, filtered by status and checkpoint.
 */
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { RegistryId } from '../registry/schemas.ts';
import { SweepStatusSchema, SweepTriggerSchema } from './schemas.ts';

extendZodWithOpenApi(z);

export const ListSweepsQuery = z
  .strictObject({
    status: z.enum([...SweepStatusSchema.options, 'running']).optional().openapi({ description: '`running`: validated or planned, not finished.' }),
    checkpoint: RegistryId.optional().openapi({ description: 'Only sweeps that ran this checkpoint.' }),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().min(1).max(2048).optional(),
  })
  .openapi('ListSweepsQuery');
export type ListSweepsQuery = z.input<typeof ListSweepsQuery>;

export const SweepSummarySchema = z
  .object({
    sweepId: z.string(),
    status: SweepStatusSchema,
    trigger: SweepTriggerSchema,
    requestedAt: z.string(),
    requestedBy: z.string().optional(),
    checkpoints: z.array(z.string()),
    suites: z.array(z.object({ id: z.string(), version: z.number().int() })),
    modes: z.array(z.string()),
    attemptsPerTask: z.number().int(),
    shardCount: z.number().int().optional(),
    succeededShards: z.number().int().optional(),
    failedShards: z.number().int().optional(),
    finishedAt: z.string().optional(),
  })
  .openapi('SweepSummary');
export type SweepSummary = z.infer<typeof SweepSummarySchema>;

export const SweepPageSchema = z
  .object({ sweeps: z.array(SweepSummarySchema), nextCursor: z.string().optional() })
  .openapi('SweepPage');
export type SweepPage = z.infer<typeof SweepPageSchema>;
