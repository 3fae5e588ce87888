/**
 * The stored records of annotation queues and gold sets, one codec per kind (keys from `record-keys.ts`): writers
 * `encode`, readers `decode`, and a record that does not match its kind fails where it is read, naming the field.
 */
import { z } from 'zod';
import { defineRecordCodec } from '../../shared/record-codec.ts';
import { AnnotationItemSchema, GoldSetSchema } from './annotation-item.ts';
import { ANNOTATION_STATUSES, annotationKeys } from './record-keys.ts';

export const annotationItemRecord = defineRecordCodec({
  kind: 'annotation item',
  schema: AnnotationItemSchema,
  keys: (item) => annotationKeys.item(item.id),
});

/** One row of a listing: points at an item (the listing's partition and status are in its keys). */
export const annotationIndexRecord = defineRecordCodec({
  kind: 'annotation index row',
  schema: z.object({ id: z.string(), listing: z.string(), status: z.enum(ANNOTATION_STATUSES), createdAt: z.string() }),
  keys: (row) => ({ pk: annotationKeys.listing(row.listing, row.status), sk: annotationKeys.indexSortKey(row.createdAt, row.id) }),
});

export const goldSetRecord = defineRecordCodec({
  kind: 'gold set',
  schema: GoldSetSchema,
  keys: (set) => ({ ...annotationKeys.goldSet(set.name), gsi1pk: annotationKeys.goldSets, gsi1sk: set.name }),
});
