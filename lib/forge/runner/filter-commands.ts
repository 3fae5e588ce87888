/** Default per-file filter commands by runner kind, `{files}` standing for the test files. */
import type { RunnerKind } from '../schemas.ts';

export const DEFAULT_FILTER_COMMANDS: Partial<Record<RunnerKind, string>> = {
  pytest: 'python -m pytest {files}',
  'node-test': 'node --test --test-reporter=junit --test-reporter-destination="$FLYWHEEL_REPORT_DIR/node-junit.xml" {files}',
  vitest: 'npx vitest run --reporter=json --outputFile="$FLYWHEEL_REPORT_DIR/vitest.json" {files}',
  jest: 'npx jest --json --outputFile="$FLYWHEEL_REPORT_DIR/jest.json" {files}',
};
