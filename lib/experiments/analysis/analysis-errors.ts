/**
 * The analysis capability's own error: a process without the query port (no engine over the archive) cannot analyse.
 */
import { FlywheelError } from '../../errors.ts';

/** Names a state machine's Catch or a log query matches. */
export const AnalysisErrorNames = {
  queryNotConfigured: 'Flywheel.QueryNotConfigured',
} as const;

/** This process has no `ports.query` (Athena or DuckDB): HTTP answers 503. */
export class QueryNotConfiguredError extends FlywheelError {
  constructor(message = 'Analyses need the query engine over the raw archive (Athena on AWS, DuckDB locally), and this process has none') {
    super(AnalysisErrorNames.queryNotConfigured, message);
  }
}
