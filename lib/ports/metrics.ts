/**
 * Metrics port: counters a use case or handler emits (`EventsAccepted`, …) without knowing where they go.
 *
 * On Lambda it is backed by Powertools Metrics (EMF, flushed by `logMetrics`); locally it may be omitted
 * (the `Ports.metrics` field is optional) or backed by a log line.
 *
 * @example
 * ports.metrics?.count('EventsAccepted', accepted);
 */
export interface MetricsPort {
  /** Adds `value` (default 1) to the counter `name` for this invocation. */
  count(name: string, value?: number): void;
}
