/**
 * The text the classifier reads from a signal: a feedback event's comment, or a report's title and body.
 * One function for training data and live signals, so both are read the same way.
 */

/** The fields that carry text in a feedback event (`comment`) or a report (`title`, `body`). */
export interface TextualSignal {
  comment?: string | undefined;
  title?: string | undefined;
  body?: string | undefined;
}

/**
 * @example
 * signalText(report)  // → 'Overexplains after correction\n\nAfter I told it the import was wrong it wrote …'
 * signalText({ rating: 'up' } as FeedbackEvent) // → undefined: a bare rating has nothing to classify
 */
export function signalText(signal: TextualSignal): string | undefined {
  const parts = [signal.title, signal.body, signal.comment].filter((s): s is string => typeof s === 'string' && s.trim() !== '');
  return parts.length === 0 ? undefined : parts.join('\n\n');
}
