/**
 * Stores the embedding of a signal's text (through the models port: OpenAI-compatible `/embeddings` or Bedrock
 * Titan) with the labels it got, for clustering. Idempotent: a signal already embedded is not sent again.
 */
import type { ModelsPort } from '../../ports/models.ts';
import type { Ports } from '../../ports/ports.ts';
import { embeddingRecord } from '../record-codecs.ts';
import { modeKeys } from '../record-keys.ts';
import type { Signal } from '../signal.ts';
import type { ModeLabel } from '../mode-label.ts';

/** Characters of a text sent to the embedding model. */
export const EMBED_MAX_CHARS = 4000;

export async function embedSignal(deps: { ports: Pick<Ports, 'records'>; embedder: ModelsPort }, signal: Signal, label: ModeLabel): Promise<boolean> {
  if (signal.text === undefined) return false;
  const key = modeKeys.embedding(signal.key);
  if (await deps.ports.records.get(key.pk, key.sk)) return false;
  const { vectors, model } = await deps.embedder.embed([signal.text.slice(0, EMBED_MAX_CHARS)]);
  const vector = vectors[0];
  if (!vector || vector.length === 0) return false;
  await deps.ports.records.put(
    embeddingRecord.encode({
      signalKey: signal.key,
      model: signal.model,
      receivedAt: signal.receivedAt,
      embeddingModel: model,
      vector: Buffer.from(Float32Array.from(vector).buffer).toString('base64'),
      text: signal.text.slice(0, 600),
      modes: label.modes.map((m) => m.mode),
      labelSource: label.source,
      confidence: label.confidence,
    }),
  );
  return true;
}

export function decodeVector(b64: string): Float32Array {
  const buf = Buffer.from(b64, 'base64');
  return new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
}
