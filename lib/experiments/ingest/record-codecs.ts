/**
 * The stored records of the experiments' ingest (keys from `lib/experiments/record-keys.ts`): the seen-markers that
 * make metric events and exposures idempotent by their client id, and declared metric definitions. Writers `encode`,
 * readers `decode`; a record that does not match fails where it is read, naming the record and the field.
 */
import { z } from 'zod';
import { defineRecordCodec } from '../../shared/record-codec.ts';
import { experimentKeys } from '../record-keys.ts';

/**
 * A metric event's seen-marker: which request stored it (a redelivery of that request counts it as its own and
 * archives it again), and when.
 */
export const MetricEventSeen = z.object({ metricEventId: z.string(), ingestId: z.string(), receivedAt: z.string() });
export type MetricEventSeen = z.output<typeof MetricEventSeen>;

export const metricEventSeenRecord = defineRecordCodec({
  kind: 'metric event seen-marker',
  schema: MetricEventSeen,
  keys: (m) => experimentKeys.metricEventSeen(m.metricEventId),
});

/** An exposure's seen-marker. */
export const ExposureSeen = z.object({ exposureId: z.string(), ingestId: z.string(), receivedAt: z.string() });
export type ExposureSeen = z.output<typeof ExposureSeen>;

export const exposureSeenRecord = defineRecordCodec({
  kind: 'exposure seen-marker',
  schema: ExposureSeen,
  keys: (e) => experimentKeys.exposureSeen(e.exposureId),
});

const Aggregate = z.object({ metric: z.string(), aggregate: z.enum(['sum', 'count']) });

/** A declared metric definition as stored (the request's checks ran once, at `putMetricDefinition`). */
export const StoredMetricDefinition = z.object({
  name: z.string(),
  description: z.string().optional(),
  kind: z.enum(['binomial', 'mean', 'ratio']),
  source: z.string().optional(),
  numerator: Aggregate.optional(),
  denominator: Aggregate.optional(),
  direction: z.enum(['increase', 'decrease']),
  capValue: z.number().optional(),
  unit: z.string().optional(),
  displayScale: z.number(),
  createdAt: z.string(),
});

export const metricDefinitionRecord = defineRecordCodec({
  kind: 'metric definition',
  schema: StoredMetricDefinition,
  keys: (d) => ({ ...experimentKeys.metricDefinition(d.name), gsi1pk: experimentKeys.allMetricDefinitions, gsi1sk: d.name }),
});
