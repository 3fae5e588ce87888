import { randomUUID } from 'node:crypto';
import { toFieldIssues } from '../shared/field-issues.ts';
import { ValidationError } from '../errors.ts';
import type { Ports } from '../ports/ports.ts';
import { envelopeMessageBody, type IngestEnvelope } from './ingest-envelope.ts';
import { ReportInput, type Report } from './schemas.ts';

/**
 * Accepts one report (internal manual or automated): validates it, and makes it durable as one queue message,
 * like feedback. The processor stores it as `REPORT#<reportId>` (conditional on absence, so a retry is one record).
 *
 * @example
 * const { ingestId } = await submitReport(ports, { reportId: 'r-1', title: 'Agent loops on npm install', … });
 */
export async function submitReport(ports: Ports, body: unknown): Promise<{ ingestId: string; reportId: string; status: 'accepted' }> {
  const parsed = ReportInput.safeParse(body);
  if (!parsed.success) throw new ValidationError('Invalid report', toFieldIssues(parsed.error.issues));
  const now = ports.now();
  const receivedAt = now.toISOString();
  const { occurredAt } = parsed.data;
  const report: Report = {
    ...parsed.data,
    // UTC, like every stored time (string order is time order).
    ...(occurredAt !== undefined ? { occurredAt: new Date(occurredAt).toISOString() } : {}),
    receivedAt,
  };
  const ingestId = randomUUID();
  const envelope: IngestEnvelope = { v: 1, ingestId, kind: 'report', receivedAt, items: [report] };
  const { body: message } = await envelopeMessageBody(ports.blobs, envelope);
  await ports.ingestQueue.send(message);
  ports.metrics?.count('ReportsAccepted', 1);
  return { ingestId, reportId: report.reportId, status: 'accepted' };
}
