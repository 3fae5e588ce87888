/**
 * One codec per record kind of the experiments capability (keys in `record-keys.ts`).
 *
 * @example
 * await records.put(experimentRecord.encode(record), { condition: { kind: 'absent' } });
 * const stored = experimentRecord.decodeIfPresent(await records.get(k.pk, k.sk));
 */
import { defineRecordCodec } from '../shared/record-codec.ts';
import { experimentKeys } from './record-keys.ts';
import { ExperimentChangeSchema, ExperimentInput, ExperimentRecordSchema } from './schemas.ts';

// experiments: experiment and change codecs (lifecycle)

/**
 * An experiment, listed by status then newest first (gsi1 `EXPERIMENTS` / `<status>#<createdAt>#<id>`). Its
 * definition is checked against `ExperimentInput` on every read and write (the shared schema types it loosely), so a
 * hand-edited arm or ramp fails where it is read, naming the field.
 */
export const experimentRecord = defineRecordCodec({
  kind: 'experiment',
  schema: ExperimentRecordSchema.extend({ definition: ExperimentInput }),
  keys: (r) => ({
    ...experimentKeys.experiment(r.definition.id),
    gsi1pk: experimentKeys.all,
    gsi1sk: experimentKeys.listSort(r.status, r.createdAt, r.definition.id),
  }),
});

/** One entry of an experiment's history, under the experiment (`CHANGE#<seq>`, seq = the revision it wrote). */
export const experimentChangeRecord = defineRecordCodec({
  kind: 'experiment change',
  schema: ExperimentChangeSchema,
  keys: (c) => experimentKeys.change(c.experimentId, c.seq),
});
