/**
 * The classifier a fresh deployment starts with: trained on the project's labelled set (plus any labels the
 * deployment has gathered), for the given taxonomy. The pipeline trains it once and stores it as a blob; retraining
 * with human labels goes through the same function.
 */
import { defaultTaxonomy, type Taxonomy } from '../taxonomy/taxonomy.ts';
import { readLabelledSet, toLabelledExamples, DEFAULT_LABELLED_SET } from './labelled-set.ts';
import { mergeLabels, trainLocalClassifier, type LabelledExample, type LocalClassifier, type TrainOptions } from './local-classifier.ts';

export interface DefaultClassifierOptions extends TrainOptions {
  taxonomy?: Taxonomy;
  /** `all` (default) for production use; `train` to keep the held-out part unseen (evaluation). */
  split?: 'all' | 'train';
  /** Labels gathered since (judge, human); they override the labelled set by id, humans over judges. */
  labels?: LabelledExample[];
  /** Path of the labelled set; default `data/modes/labelled.jsonl`. */
  path?: string;
}

/**
 * @example
 * const model = trainDefaultLocalClassifier({ taxonomy: await loadTaxonomy(ports.records), labels: humanLabels });
 */
export function trainDefaultLocalClassifier(options: DefaultClassifierOptions = {}): LocalClassifier {
  const { taxonomy = defaultTaxonomy(), split = 'all', labels = [], path = DEFAULT_LABELLED_SET, ...train } = options;
  const records = readLabelledSet(path).filter((r) => split === 'all' || r.split === 'train');
  return trainLocalClassifier(mergeLabels(toLabelledExamples(records), labels), taxonomy, train);
}
