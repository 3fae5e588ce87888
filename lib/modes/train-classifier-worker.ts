/**
 * Trains the default local classifier on a worker thread, so the local runtime's HTTP loop keeps answering during
 * the few seconds training takes. The worker gets the taxonomy and the gathered labels and posts the serialised model.
 */
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { trainDefaultLocalClassifier } from './classifier/default-classifier.ts';
import type { LabelledExample, SerializedLocalClassifier } from './classifier/local-classifier.ts';
import type { Taxonomy } from './taxonomy/taxonomy.ts';

interface TrainRequest {
  flywheelTrainClassifier: { taxonomy: Taxonomy; labels: LabelledExample[] };
}

/** Trains on a worker thread; resolves with the serialised model. */
export function trainClassifierOnWorker(taxonomy: Taxonomy, labels: LabelledExample[]): Promise<SerializedLocalClassifier> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { flywheelTrainClassifier: { taxonomy, labels } } satisfies TrainRequest });
    let done = false;
    worker.once('message', (m: { model?: SerializedLocalClassifier; error?: string }) => {
      done = true;
      if (m.model) resolve(m.model);
      else reject(new Error(m.error ?? 'classifier training failed'));
    });
    worker.once('error', (e) => {
      done = true;
      reject(e);
    });
    worker.once('exit', (code) => {
      if (!done) reject(new Error(`classifier training worker exited with ${code}`));
    });
  });
}

const request = (workerData as Partial<TrainRequest> | undefined)?.flywheelTrainClassifier;
if (parentPort && request) {
  try {
    const model = trainDefaultLocalClassifier({ taxonomy: request.taxonomy, labels: request.labels });
    parentPort.postMessage({ model: model.toJSON() });
  } catch (error) {
    parentPort.postMessage({ error: String(error) });
  }
}
