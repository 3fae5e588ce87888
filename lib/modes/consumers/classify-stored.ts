/**
 * The `modes/classify` consumer: each SQS record is one EventBridge event (`feedback.stored` or `report.stored`,
 * delivered by the rule on the Flywheel bus, or by the local runtime's tail of its event log), whose detail lists
 * the stored ids. Each signal is loaded, classified by the chain, and its comment embedded for clustering when an
 * embedding model is configured. A record that throws is reported in `batchItemFailures`; everything it wrote is
 * idempotent, so the redelivery finishes the work without counting twice.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { TransientError } from '../../errors.ts';
import { forEachLimited } from '../../shared/for-each-limited.ts';
import { classifySignal, type ChainDeps } from '../classify-signal.ts';
import { embedSignal } from '../clusters/embed-signal.ts';
import type { ModelsPort } from '../../ports/models.ts';
import type { Ports } from '../../ports/ports.ts';
import { loadSignal } from '../signal.ts';
import { ensureTaxonomy } from '../taxonomy/taxonomy-store.ts';
import { scopePortsToTenant, tenantOf } from '../../auth/tenant-ports.ts';

export const MODES_EVENT_TYPES = ['feedback.stored', 'report.stored'] as const;

export interface ClassifyDeps extends ChainDeps {
  embedder?: ModelsPort;
}

/** The ids an EventBridge-shaped event names. */
export function storedIds(body: string): { kind: 'feedback' | 'report'; ids: string[] } | undefined {
  const event = JSON.parse(body) as { 'detail-type'?: string; type?: string; detail?: { eventIds?: unknown; reportIds?: unknown } };
  const type = event['detail-type'] ?? event.type;
  const ids = type === 'feedback.stored' ? event.detail?.eventIds : type === 'report.stored' ? event.detail?.reportIds : undefined;
  if (!Array.isArray(ids)) return undefined;
  return { kind: type === 'feedback.stored' ? 'feedback' : 'report', ids: ids.filter((i): i is string => typeof i === 'string') };
}

/** Classifies every signal an event names. */
export async function classifyStoredEvent(rootDeps: ClassifyDeps, body: string): Promise<{ classified: number; outcomes: Record<string, number> }> {
  const parsed = storedIds(body);
  if (!parsed) return { classified: 0, outcomes: {} };
  // The event names its tenant's signals: read and label them through that tenant's view of the ports.
  const tenant = tenantOf((JSON.parse(body) as { detail?: { tenant?: unknown } }).detail);
  const deps: ClassifyDeps = { ...rootDeps, ports: scopePortsToTenant(rootDeps.ports as Ports, tenant) };
  const taxonomy = await ensureTaxonomy(deps.ports.records);
  const outcomes: Record<string, number> = {};
  await forEachLimited(parsed.ids, 8, async (id) => {
    const signal = await loadSignal(deps.ports, parsed.kind, id);
    // Stored before the event was published: a miss is a read that came too early; the redelivery will find it.
    if (!signal) throw new TransientError(`${parsed.kind} ${id} named by the event is not stored (yet)`);
    const { outcome, label } = await classifySignal(deps, signal, taxonomy);
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    if (deps.embedder) await embedSignal({ ports: deps.ports, embedder: deps.embedder }, signal, label);
  });
  return { classified: parsed.ids.length, outcomes };
}

/**
 * @example
 * export const handler = middy(makeClassifyStoredHandler({ ports, classifier: storedClassifier(ports), ...modesModelsFromEnv() }));
 */
export function makeClassifyStoredHandler(deps: ClassifyDeps): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const recordHandler = async (record: SQSRecord) => classifyStoredEvent(deps, record.body);
  return async (event: SQSEvent) => {
    const processor = new BatchProcessor(EventType.SQS);
    return processPartialResponse(event, recordHandler, processor, { throwOnFullBatchFailure: false });
  };
}
