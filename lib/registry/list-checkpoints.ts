import type { Ports } from '../ports/ports.ts';
import { parseInput } from '../shared/parse-input.ts';
import { toCheckpoint } from './record-views.ts';
import { registryKeys } from './record-keys.ts';
import { ListCheckpointsQuery, type Checkpoint } from './schemas.ts';

/**
 * Registered checkpoints, newest first: all of them (index gsi1 `CHECKPOINTS`) or one model's (gsi2
 * `CHECKPOINTMODEL#<model>`); `cursor` pages on.
 *
 * @example
 * const { items, cursor } = await listCheckpoints(ports, { model: 'coder-7b', limit: '20' });
 */
export async function listCheckpoints(ports: Pick<Ports, 'records'>, rawQuery: unknown): Promise<{ items: Checkpoint[]; cursor?: string }> {
  const q = parseInput(ListCheckpointsQuery, rawQuery, 'query string');
  const page = await ports.records.query({
    index: q.model ? 'gsi2' : 'gsi1',
    partition: q.model ? registryKeys.checkpointsByModel(q.model) : registryKeys.allCheckpoints,
    descending: true,
    limit: q.limit,
    ...(q.cursor ? { cursor: q.cursor } : {}),
  });
  return { items: page.items.map(toCheckpoint), ...(page.cursor ? { cursor: page.cursor } : {}) };
}
