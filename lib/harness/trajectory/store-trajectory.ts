import type { BlobsPort } from '../../ports/blobs.ts';
import { NotFoundError } from '../../errors.ts';
import { parseJsonl, toJsonl, type Trajectory } from './trajectory-schema.ts';

/** The blob key of an attempt's trajectory; the attempt record holds it. */
export function trajectoryKey(attemptId: string): string {
  return `trajectories/attempts/${attemptId}.jsonl`;
}

/**
 * Writes a trajectory as JSON Lines to blobs and returns its key.
 *
 * @example
 * const key = await storeTrajectory(ports.blobs, result.trajectory);
 */
export async function storeTrajectory(blobs: BlobsPort, trajectory: Trajectory): Promise<string> {
  const key = trajectoryKey(trajectory.header.attemptId);
  await blobs.put(key, toJsonl(trajectory), { contentType: 'application/x-ndjson' });
  return key;
}

/** Reads and validates a stored trajectory. */
export async function loadTrajectory(blobs: BlobsPort, key: string): Promise<Trajectory> {
  const body = await blobs.get(key);
  if (!body) throw new NotFoundError(`no trajectory at ${key}`);
  return parseJsonl(new TextDecoder().decode(body));
}
