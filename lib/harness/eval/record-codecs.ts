/**
 * One codec per record kind an eval run writes besides its attempts (keys in `../attempt/record-keys.ts`, the
 * attempt's codec in `../attempt/record-codecs.ts`): the run, one mode's results, a compare-modes report. A record is
 * checked where it is written and typed where it is read; a malformed one fails as `MalformedRecordError`.
 *
 * @example
 * await records.put(evalResultsRecord.encode({ kind: 'eval-results', ...results }));
 * const results = evalResultsRecord.decodeIfPresent(await records.get(key.pk, key.sk));
 */
import { z } from 'zod';
import { defineRecordCodec } from '../../shared/record-codec.ts';
import { evalKeys } from '../attempt/record-keys.ts';
import { HarnessModeSchema } from '../task/harness-mode.ts';
import { CompareModesReportSchema } from './compare-modes-report.ts';
import { EvalResultsSchema } from './eval-results.ts';

/** What a run was asked to do, written when it starts (a resumed run overwrites it). */
export const EvalRunRecordSchema = z.object({
  kind: z.literal('eval-run'),
  runId: z.string(),
  mode: HarnessModeSchema,
  model: z.string(),
  attemptsPerTask: z.number().int(),
  taskIds: z.array(z.string()),
  updatedAt: z.string(),
});
export type EvalRunRecord = z.infer<typeof EvalRunRecordSchema>;

export const evalRunRecord = defineRecordCodec({
  kind: 'eval run',
  schema: EvalRunRecordSchema,
  keys: (r) => evalKeys.run(r.runId),
});

export const evalResultsRecord = defineRecordCodec({
  kind: 'eval results',
  schema: EvalResultsSchema.extend({ kind: z.literal('eval-results') }),
  keys: (r) => evalKeys.results(r.runId, r.mode),
});

export const compareModesRecord = defineRecordCodec({
  kind: 'eval compare-modes report',
  schema: CompareModesReportSchema.extend({ kind: z.literal('eval-compare-modes') }),
  keys: (r) => evalKeys.compareModes(r.runId),
});
