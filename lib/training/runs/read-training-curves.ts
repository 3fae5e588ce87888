/**
 * A run's curves: the trainer's `metrics.jsonl` (one line per step, `trainingRunKeys(runId).metrics`) as lines. A line
 * that is not a metrics line (a partial write of a crashed trainer, a stray print) is skipped, not fatal: the curves
 * of the other steps are still worth seeing.
 *
 * Bounded for a long run: only the last `METRICS_READ_LIMIT_BYTES` of the file are parsed (a run of millions of steps
 * keeps its newest ones), and the lines are thinned to at most `maxPoints` (default `CURVE_MAX_POINTS`), evenly
 * spaced, the first and last kept, so the API's answer and the PNG stay small whatever the run's length.
 *
 * @example
 * const lines = await readTrainingCurves({ blobs }, 'rl-42'); // [{ step: 0, at, loss, tokens, … }, …] (≤ 2,000)
 */
import { z } from 'zod';
import type { Ports } from '../../ports/ports.ts';
import { TrainingMetricsLineSchema, trainingRunKeys, type TrainingMetricsLine } from '../schemas.ts';

/** At most this many lines come back from `readTrainingCurves` (a PNG panel is 360 px wide: more adds nothing). */
export const CURVE_MAX_POINTS = 2000;
/** Of a larger metrics file only its last this-many bytes are parsed. */
export const METRICS_READ_LIMIT_BYTES = 64 * 1024 * 1024;

/** One metrics line, or undefined for a blank, torn or malformed one (skipped, as a partly written file has). */
function parseLine(text: string): TrainingMetricsLine | undefined {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const line = TrainingMetricsLineSchema.safeParse(value);
  return line.success ? line.data : undefined;
}

function parseLines(bytes: Uint8Array): TrainingMetricsLine[] {
  let view = bytes;
  if (view.length > METRICS_READ_LIMIT_BYTES) {
    // The tail, from its first whole line on.
    view = view.subarray(view.length - METRICS_READ_LIMIT_BYTES);
    const newline = view.indexOf(10);
    view = newline < 0 ? new Uint8Array() : view.subarray(newline + 1);
  }
  const lines: TrainingMetricsLine[] = [];
  for (const text of Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('utf8').split('\n')) {
    const line = parseLine(text);
    if (line) lines.push(line);
  }
  return lines;
}

/** At most `max` of `items`, evenly spaced, the first and the last kept. */
export function downsample<T>(items: readonly T[], max: number): T[] {
  if (items.length <= max) return [...items];
  if (max <= 1) return items.slice(-1);
  const out: T[] = [];
  for (let i = 0; i < max; i++) out.push(items[Math.round((i * (items.length - 1)) / (max - 1))]!);
  return out;
}

export async function readTrainingCurves(ports: Pick<Ports, 'blobs'>, runId: string, options: { maxPoints?: number } = {}): Promise<TrainingMetricsLine[]> {
  const bytes = await ports.blobs.get(trainingRunKeys(runId).metrics);
  if (!bytes) return [];
  return downsample(parseLines(bytes), options.maxPoints ?? CURVE_MAX_POINTS);
}

/** The newest metrics line (the trainer's heartbeat), or undefined before its first step. */
export async function lastMetricsLine(ports: Pick<Ports, 'blobs'>, runId: string): Promise<TrainingMetricsLine | undefined> {
  const bytes = await ports.blobs.get(trainingRunKeys(runId).metrics);
  if (!bytes) return undefined;
  // From the end: the newest valid line, without parsing every step before it.
  let end = bytes.length;
  while (end > 0) {
    const start = bytes.lastIndexOf(10, end - 1) + 1;
    const line = parseLine(Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('utf8'));
    if (line) return line;
    end = start - 1;
  }
  return undefined;
}

/** What the trainer writes to `trainingRunKeys(runId).heartbeat` every step (a few bytes, unlike the metrics). */
export const TrainerHeartbeatSchema = z.looseObject({ step: z.number().int().nonnegative(), at: z.string() });

/**
 * The trainer's newest beat: its `heartbeat.json` when there is a valid one, else the last metrics line (a trainer
 * that writes no heartbeat file); undefined before its first step.
 *
 * @example
 * const beat = await readTrainerHeartbeat({ blobs }, 'rl-42'); // { step: 12, at: '2026-12-03T10:02:00Z' }
 */
export async function readTrainerHeartbeat(ports: Pick<Ports, 'blobs'>, runId: string): Promise<{ step: number; at: string } | undefined> {
  const bytes = await ports.blobs.get(trainingRunKeys(runId).heartbeat);
  if (bytes) {
    try {
      const beat = TrainerHeartbeatSchema.safeParse(JSON.parse(Buffer.from(bytes).toString('utf8')));
      if (beat.success) return { step: beat.data.step, at: beat.data.at };
    } catch {
      // A partial write: the metrics still say it.
    }
  }
  const last = await lastMetricsLine(ports, runId);
  return last ? { step: last.step, at: last.at } : undefined;
}

/** A metrics line's time as the run record keeps it (ISO 8601 in UTC); nothing when the trainer wrote no time. */
export function heartbeatOf(line: Pick<TrainingMetricsLine, 'at'>): { lastHeartbeatAt?: string } {
  const at = Date.parse(line.at);
  return Number.isNaN(at) ? {} : { lastHeartbeatAt: new Date(at).toISOString() };
}
