/**
 * One codec per record kind of judge derivations (keys in `record-keys.ts`).
 *
 * @example
 * await records.put(derivationRecord.encode(derivation));
 * const part = derivationJudgeRecord.decodeIfPresent(await records.get(k.pk, k.sk));
 */
import { defineRecordCodec } from '../../shared/record-codec.ts';
import { derivationKeys } from './record-keys.ts';
import { DerivationJudgeSchema, DerivationSchema } from './schemas.ts';

export const derivationRecord = defineRecordCodec({
  kind: 'judge derivation',
  schema: DerivationSchema,
  keys: (d) => ({ ...derivationKeys.derivation(d.derivationId), gsi1pk: derivationKeys.all, gsi1sk: derivationKeys.order(d.createdAt, d.derivationId) }),
});

export const derivationJudgeRecord = defineRecordCodec({
  kind: 'judge derivation part',
  schema: DerivationJudgeSchema,
  keys: (j) => derivationKeys.judge(j.derivationId, j.name),
});
