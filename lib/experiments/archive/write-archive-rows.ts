/**
 * The raw archive's writer: rows as one JSON Lines object, columns in the order the Glue tables and the DuckDB views
 * declare (`METRIC_ROW_COLUMNS`, `EXPOSURE_ROW_COLUMNS`). It writes through the ROOT blobs port, because the tenant is
 * a partition (`tenant=<t>` in the key), not a blob prefix: one table then serves every tenant, and every query names
 * its own.
 */
import type { BlobsPort } from '../../ports/blobs.ts';
import { EXPOSURE_ROW_COLUMNS, METRIC_ROW_COLUMNS, type ExposureRow, type MetricRow } from '../schemas.ts';
import { archiveKeys } from '../record-keys.ts';

/** The archive a key must lie in: rows of one tenant never land in another's partition. */
function assertPartition(root: string, tenant: string, key: string): void {
  const prefix = `${root}tenant=${tenant}/dt=`;
  if (!key.startsWith(prefix) || key.includes('..')) throw new Error(`archive key ${key} is not under ${prefix}`);
}

function jsonLines<R extends object>(rows: readonly R[], columns: readonly (keyof R & string)[]): string {
  let out = '';
  for (const row of rows) {
    // Every column present (null when absent) and in one order: readers see the same shape in every file.
    const ordered: Record<string, unknown> = {};
    for (const c of columns) ordered[c] = row[c] ?? null;
    out += JSON.stringify(ordered) + '\n';
  }
  return out;
}

/**
 * Writes metric rows as one JSON Lines object through the ROOT blobs port (the key holds `tenant=`); a retry
 * overwrites the same object.
 *
 * @example
 * await writeMetricRows(rootPorts.blobs, 'acme', archiveKeys.metrics('acme', '2026-12-04', ingestId), rows);
 */
export async function writeMetricRows(rootBlobs: BlobsPort, tenant: string, key: string, rows: MetricRow[]): Promise<void> {
  assertPartition(archiveKeys.metricsRoot, tenant, key);
  await rootBlobs.put(key, jsonLines(rows, METRIC_ROW_COLUMNS), { contentType: 'application/x-ndjson' });
}

/**
 * Writes exposure rows as one JSON Lines object through the ROOT blobs port (the key holds `tenant=`).
 *
 * @example
 * await writeExposureRows(rootPorts.blobs, 'default', archiveKeys.exposures('default', '2026-12-04', ingestId), rows);
 */
export async function writeExposureRows(rootBlobs: BlobsPort, tenant: string, key: string, rows: ExposureRow[]): Promise<void> {
  assertPartition(archiveKeys.exposuresRoot, tenant, key);
  await rootBlobs.put(key, jsonLines(rows, EXPOSURE_ROW_COLUMNS), { contentType: 'application/x-ndjson' });
}
