/**
 * The record and blob key layout of experiments, in one place so writers and readers agree.
 *
 * | item | pk | sk | gsi1 |
 * | --- | --- | --- | --- |
 * | experiment | `EXPERIMENT#<id>` | `EXPERIMENT` | `EXPERIMENTS` / `<status>#<createdAt>#<id>` |
 * | change (history) | `EXPERIMENT#<id>` | `CHANGE#<seq 8 digits>` | |
 * | analysis (snapshot) | `EXPERIMENT#<id>` | `ANALYSIS#<at>#<analysisId>` | |
 * | metric definition | `METRICDEF#<name>` | `METRICDEF` | `METRICDEFS` / `<name>` |
 * | metric event seen (idempotency) | `METRICEVENT#<metricEventId>` | `SEEN` | |
 * | exposure seen (idempotency) | `EXPOSURE#<exposureId>` | `SEEN` | |
 * | notice sent once (schedule) | `EXPERIMENT#<id>` | `NOTICE#<noticeId>` | |
 * | local event-log cursor | `EXPERIMENTSLOCAL` | `EVENTCURSOR` | |
 * | incumbent (registry) | see `lib/registry/record-keys.ts` | | |
 *
 * Archive (blobs, through the ROOT blobs port: the tenant is a partition column, so one Glue table serves all tenants
 * and Athena's injected projection makes every query name its tenant):
 * `raw/metrics/tenant=<t>/dt=<YYYY-MM-DD>/<ingestId>.jsonl`, `raw/exposures/tenant=<t>/dt=<YYYY-MM-DD>/<ingestId>.jsonl`.
 */

export const experimentKeys = {
  experiment: (id: string) => ({ pk: `EXPERIMENT#${id}`, sk: 'EXPERIMENT' }),
  all: 'EXPERIMENTS',
  listSort: (status: string, createdAt: string, id: string) => `${status}#${createdAt}#${id}`,
  change: (id: string, seq: number) => ({ pk: `EXPERIMENT#${id}`, sk: `CHANGE#${String(seq).padStart(8, '0')}` }),
  changePrefix: 'CHANGE#',
  analysis: (id: string, at: string, analysisId: string) => ({ pk: `EXPERIMENT#${id}`, sk: `ANALYSIS#${at}#${analysisId}` }),
  analysisPrefix: 'ANALYSIS#',
  metricDefinition: (name: string) => ({ pk: `METRICDEF#${name}`, sk: 'METRICDEF' }),
  allMetricDefinitions: 'METRICDEFS',
  metricEventSeen: (id: string) => ({ pk: `METRICEVENT#${id}`, sk: 'SEEN' }),
  exposureSeen: (id: string) => ({ pk: `EXPOSURE#${id}`, sk: 'SEEN' }),
} as const;

/** The archive's tables and their folders. */
export const ARCHIVE_TABLES = { metrics: 'metric_events', exposures: 'exposures' } as const;

export const archiveKeys = {
  metricsRoot: 'raw/metrics/',
  exposuresRoot: 'raw/exposures/',
  metrics: (tenant: string, day: string, ingestId: string) => `raw/metrics/tenant=${tenant}/dt=${day}/${ingestId}.jsonl`,
  exposures: (tenant: string, day: string, ingestId: string) => `raw/exposures/tenant=${tenant}/dt=${day}/${ingestId}.jsonl`,
  /** A derived-metrics object (feedback thumbs, failure modes), keyed by what produced it so a retry overwrites it. */
  derivedMetrics: (tenant: string, day: string, sourceId: string) => `raw/metrics/tenant=${tenant}/dt=${day}/derived-${encodeURIComponent(sourceId)}.jsonl`,
  /** The PNG of a metric's lift over time. */
  liftChart: (tenant: string, experimentId: string, metric: string) => `experiments/${tenant}/${encodeURIComponent(experimentId)}/lift-${metric}.png`,
} as const;
