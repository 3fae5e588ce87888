/**
 * The names of the modes capability's errors, apart from the classes so the HTTP shell's status map can name them
 * without loading a model factory or the classifier.
 *
 * @example
 * ERROR_STATUS[ModesErrorNames.modelNotConfigured]; // 503
 */

/** As a log query, a state machine or the HTTP status map spells them. */
export const ModesErrorNames = {
  modelNotConfigured: 'Flywheel.ModelNotConfigured',
  trainingData: 'Flywheel.TrainingDataError',
} as const;
