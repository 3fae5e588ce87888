/**
 * A run's curves: the trainer's `metrics.jsonl` (one line per step, `trainingRunKeys(runId).metrics`) as lines. A line
 * that is not a metrics line (a partial write of a crashed trainer, a stray print) is skipped, not fatal: the curves
 * of the other steps are still worth seeing.
 *
 * @example
 * const lines = await readTrainingCurves({ blobs }, 'rl-42'); // [{ step: 0, at, loss, tokens, … }, …]
 */
import type { Ports } from '../../ports/ports.ts';
import { TrainingMetricsLineSchema, trainingRunKeys, type TrainingMetricsLine } from '../schemas.ts';

export async function readTrainingCurves(ports: Pick<Ports, 'blobs'>, runId: string): Promise<TrainingMetricsLine[]> {
  const bytes = await ports.blobs.get(trainingRunKeys(runId).metrics);
  if (!bytes) return [];
  const lines: TrainingMetricsLine[] = [];
  for (const text of Buffer.from(bytes).toString('utf8').split('\n')) {
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      continue;
    }
    const line = TrainingMetricsLineSchema.safeParse(value);
    if (line.success) lines.push(line.data);
  }
  return lines;
}

/** The newest metrics line (the trainer's heartbeat), or undefined before its first step. */
export async function lastMetricsLine(ports: Pick<Ports, 'blobs'>, runId: string): Promise<TrainingMetricsLine | undefined> {
  return (await readTrainingCurves(ports, runId)).at(-1);
}

/** A metrics line's time as the run record keeps it (ISO 8601 in UTC); nothing when the trainer wrote no time. */
export function heartbeatOf(line: TrainingMetricsLine): { lastHeartbeatAt?: string } {
  const at = Date.parse(line.at);
  return Number.isNaN(at) ? {} : { lastHeartbeatAt: new Date(at).toISOString() };
}
