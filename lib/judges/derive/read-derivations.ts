/**
 * Reading derivations back: one by its id or by the top checkpoint it was made from, with its report (what
 * `report-derivation` stored), and the list, newest first.
 *
 * @example
 * const { derivation, report } = await getDerivation(ports, { checkpointId: 'coder-7b:step-1200' });
 * report?.judges.map((j) => [j.name, j.distilled?.decision?.promoted]);
 * const { items } = await listDerivations(ports, { limit: 20 });
 */
import { NotFoundError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { firstIssue } from '../../shared/field-issues.ts';
import { MalformedRecordError } from '../../shared/record-codec.ts';
import { derivationIdOf } from '../workflow/derive-steps.ts';
import { derivationRecord } from './record-codecs.ts';
import { derivationKeys } from './record-keys.ts';
import { DerivationReportSchema, type Derivation, type DerivationReport } from './schemas.ts';

/** What a malformed report is called in its error (`Flywheel.MalformedRecord`, the blob key in place of `pk`). */
const REPORT_KIND = 'judge derivation report';

/** A derivation and its report (absent until it finished). Throws `Flywheel.NotFoundError` for an unknown one. */
export async function getDerivation(ports: Pick<Ports, 'records' | 'blobs'>, which: { derivationId: string } | { checkpointId: string }): Promise<{ derivation: Derivation; report?: DerivationReport }> {
  const id = 'derivationId' in which ? which.derivationId : derivationIdOf(which.checkpointId);
  const key = derivationKeys.derivation(id);
  const derivation = derivationRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  if (!derivation) throw new NotFoundError(`No judge derivation ${id}`);
  const bytes = derivation.reportKey ? await ports.blobs.get(derivation.reportKey) : undefined;
  const report = bytes ? parseDerivationReport(bytes, derivation.reportKey!) : undefined;
  return { derivation, ...(report ? { report } : {}) };
}

/**
 * A stored `report.json` read back: its schema checked, or `Flywheel.MalformedRecord` naming the blob and the first
 * bad field (`''` when it is not JSON), never a bare parse error.
 *
 * @example
 * const report = parseDerivationReport(await blobs.get(key), key);
 */
export function parseDerivationReport(bytes: Uint8Array, key: string): DerivationReport {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (error) {
    throw new MalformedRecordError(REPORT_KIND, key, '', '', `not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = DerivationReportSchema.safeParse(value);
  if (!parsed.success) {
    const { path, message } = firstIssue(parsed.error);
    throw new MalformedRecordError(REPORT_KIND, key, '', path, message);
  }
  return parsed.data;
}

/** Derivations, newest first (one page; `cursor` pages on). */
export async function listDerivations(ports: Pick<Ports, 'records'>, options: { limit?: number; cursor?: string } = {}): Promise<{ items: Derivation[]; cursor?: string }> {
  const page = await ports.records.query({ index: 'gsi1', partition: derivationKeys.all, descending: true, limit: options.limit ?? 50, ...(options.cursor ? { cursor: options.cursor } : {}) });
  return { items: page.items.map((i) => derivationRecord.decode(i)), ...(page.cursor ? { cursor: page.cursor } : {}) };
}
