/**
 * The one reader of a stored trajectory blob, whatever wrote it: the harness's JSON Lines; a feedback ingest's inline
 * upload, stored as `JSON.stringify(inline)` (the JSON Lines as one JSON string, the lines as a JSON array, or one
 * ATIF document); or an ATIF document stored as a file. The size is checked before anything is decoded.
 *
 * @example
 * const read = readTrajectoryBlob(await blobs.get(key));
 * if ('problem' in read) skip(read.problem); else use(read.trajectory);
 */
import { fromAtif, type AtifTrajectory } from './atif.ts';
import { parseJsonl, type Trajectory } from './trajectory-schema.ts';

/** Bytes of a trajectory blob decoded at most. */
export const MAX_TRAJECTORY_BLOB_BYTES = 32 * 1024 * 1024;

export type TrajectoryBlobRead = { trajectory: Trajectory } | { problem: string };

/**
 * @example
 * readTrajectoryBlob(Buffer.from(JSON.stringify(toJsonl(t)))); // { trajectory } — an inline upload as ingest stores it
 * readTrajectoryBlob(Buffer.from('nope')); // { problem: 'the trajectory is malformed: …' }
 */
export function readTrajectoryBlob(bytes: Uint8Array, maxBytes = MAX_TRAJECTORY_BLOB_BYTES): TrajectoryBlobRead {
  if (bytes.byteLength > maxBytes) return { problem: `the trajectory is over ${maxBytes} bytes` };
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  try {
    return { trajectory: parseTrajectoryText(text) };
  } catch (error) {
    return { problem: `the trajectory is malformed: ${(error as Error).message.slice(0, 300)}` };
  }
}

function parseTrajectoryText(text: string): Trajectory {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return parseJsonl(text); // several JSON values, one a line: JSON Lines
  }
  if (typeof value === 'string') return parseJsonl(value);
  if (Array.isArray(value)) return parseJsonl(value.map((l) => JSON.stringify(l)).join('\n'));
  if (value !== null && typeof value === 'object' && Array.isArray((value as { steps?: unknown }).steps)) return fromAtif(value as AtifTrajectory);
  return parseJsonl(text); // one line: a header alone, or an error that names what is wrong
}
