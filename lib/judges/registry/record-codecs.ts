/**
 * One codec per record kind of the judge registry (keys in `record-keys.ts`): writers store `codec.encode(value)`,
 * readers take `codec.decode(item)`, so a malformed record fails where it is read, naming the record and the field.
 *
 * @example
 * await records.put(judgeVersionRecord.encode(version), { condition: { kind: 'absent' } });
 * const head = judgeHeadRecord.decodeIfPresent(await records.get(k.pk, k.sk));
 */
import { CalibrationReportSchema } from '../schemas.ts';
import { defineRecordCodec } from '../../shared/record-codec.ts';
import { judgeKeys } from './record-keys.ts';
import { JudgeHeadSchema, JudgeVersionRecordSchema } from './schemas.ts';

/** A judge name's head: kind, acceptance rule, the promoted version; listed on gsi1 `JUDGES` by name. */
export const judgeHeadRecord = defineRecordCodec({
  kind: 'judge',
  schema: JudgeHeadSchema,
  keys: (h) => ({ ...judgeKeys.head(h.name), gsi1pk: judgeKeys.allJudges, gsi1sk: h.name }),
});

/** One judge version: its definition, identity and status. */
export const judgeVersionRecord = defineRecordCodec({
  kind: 'judge version',
  schema: JudgeVersionRecordSchema,
  keys: (v) => judgeKeys.version(v.name, v.version),
});

/** A calibration report of one judge version (immutable; the newest of a version is one descending query). */
export const calibrationReportRecord = defineRecordCodec({
  kind: 'calibration report',
  schema: CalibrationReportSchema,
  keys: (r) => judgeKeys.calibration(r.judge.name, r.judge.version, r.createdAt, r.id),
});
