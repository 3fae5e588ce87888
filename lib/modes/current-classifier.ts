/**
 * The local classifier the chain uses now. It lives as a blob (`modes/classifier/<modelVersion>.json`) with a pointer
 * (`modes/classifier/current.json`), so every process (Lambda, the local runtime, the CLI) uses the same model and a
 * retrain is one pointer write. With none stored yet, the default is trained from the project's labelled set plus the
 * consented judge and human labels gathered so far, and stored.
 */
import { z } from 'zod';
import type { Ports } from '../ports/ports.ts';
import { trainDefaultLocalClassifier } from './classifier/default-classifier.ts';
import { loadLocalClassifier, type LabelledExample, type LocalClassifier } from './classifier/local-classifier.ts';
import { trainingExampleRecord } from './record-codecs.ts';
import { modeBlobKeys, modeKeys } from './record-keys.ts';
import { ensureTaxonomy } from './taxonomy/taxonomy-store.ts';
import { trainClassifierOnWorker } from './train-classifier-worker.ts';

/** What the chain needs of a classifier. */
export type ModeClassifier = Pick<LocalClassifier, 'classify' | 'modelVersion' | 'taxonomyVersion' | 'escalationThreshold'>;

export interface ClassifierSource {
  get(): Promise<ModeClassifier>;
  /** Forget the cached model (after a retrain). */
  invalidate(): void;
}

/** How long a process keeps its loaded model before checking the pointer again. */
const RECHECK_MS = 5 * 60 * 1000;

/**
 * @example
 * const source = storedClassifier(ports, { trainOn: 'worker' });
 * const c = (await source.get()).classify('it ignored my AGENTS.md');
 */
export function storedClassifier(ports: Pick<Ports, 'records' | 'blobs'>, options: { trainOn?: 'inline' | 'worker' } = {}): ClassifierSource {
  let cached: { model: ModeClassifier; version: string; at: number } | undefined;
  let loading: Promise<ModeClassifier> | undefined;
  const load = async (): Promise<ModeClassifier> => {
    const pointer = await readPointer(ports);
    if (cached && pointer?.modelVersion === cached.version) {
      cached.at = Date.now();
      return cached.model;
    }
    if (pointer) {
      const bytes = await ports.blobs.get(pointer.key);
      if (bytes) {
        const model = loadLocalClassifier(JSON.parse(Buffer.from(bytes).toString('utf8')));
        cached = { model, version: model.modelVersion, at: Date.now() };
        return model;
      }
    }
    const model = await retrainClassifier(ports, options);
    cached = { model, version: model.modelVersion, at: Date.now() };
    return model;
  };
  return {
    async get() {
      if (cached && Date.now() - cached.at < RECHECK_MS) return cached.model;
      loading ??= load().finally(() => (loading = undefined));
      return loading;
    },
    invalidate() {
      cached = undefined;
    },
  };
}

/** A fixed classifier (tests, benchmarks). */
export function fixedClassifier(model: ModeClassifier): ClassifierSource {
  return { get: async () => model, invalidate: () => {} };
}

/** `modes/classifier/current.json`: which stored model is current. */
const ClassifierPointer = z.object({ modelVersion: z.string(), key: z.string() });

async function readPointer(ports: Pick<Ports, 'blobs'>): Promise<{ modelVersion: string; key: string } | undefined> {
  const bytes = await ports.blobs.get(modeBlobKeys.currentClassifier);
  if (!bytes) return undefined;
  try {
    const p = ClassifierPointer.safeParse(JSON.parse(Buffer.from(bytes).toString('utf8')));
    return p.success ? p.data : undefined;
  } catch {
    return undefined;
  }
}

/** The consented judge and human labels gathered so far (human over judge, by signal). */
export async function gatheredLabels(ports: Pick<Ports, 'records'>): Promise<LabelledExample[]> {
  const out: LabelledExample[] = [];
  let cursor: string | undefined;
  do {
    const page = await ports.records.query({ index: 'gsi1', partition: modeKeys.trainingIndex, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) {
      const example = trainingExampleRecord.decode(item);
      if (!example.trainingConsent) continue;
      out.push({
        id: example.signalKey,
        text: example.text,
        modes: example.modes,
        labelSource: example.labelSource,
        weight: example.labelSource === 'human' ? 1 : 0.5,
      });
    }
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/**
 * Trains on the labelled set plus the gathered labels, stores the model and moves the pointer to it.
 *
 * @example
 * const model = await retrainClassifier(ports); // after a batch of human labels
 */
export async function retrainClassifier(ports: Pick<Ports, 'records' | 'blobs'>, options: { trainOn?: 'inline' | 'worker' } = {}): Promise<LocalClassifier> {
  const taxonomy = await ensureTaxonomy(ports.records);
  const labels = await gatheredLabels(ports);
  const model =
    options.trainOn === 'worker'
      ? loadLocalClassifier(await trainClassifierOnWorker(taxonomy, labels))
      : trainDefaultLocalClassifier({ taxonomy, labels });
  const key = modeBlobKeys.classifier(model.modelVersion);
  await ports.blobs.put(key, JSON.stringify(model.toJSON()), { contentType: 'application/json' });
  await ports.blobs.put(modeBlobKeys.currentClassifier, JSON.stringify({ modelVersion: model.modelVersion, key, trainedAt: model.trainedAt }), {
    contentType: 'application/json',
  });
  return model;
}
