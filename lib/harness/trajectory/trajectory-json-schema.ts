/**
 * The JSON Schema of one line of a Flywheel trajectory (JSON Lines), generated from the zod schemas in
 * `trajectory-schema.ts` with zod 4's `z.toJSONSchema`, so the Python side (the trainer, its contract test
 * `batch-images/trainer/tests/test_trajectory_contract.py`) validates against the TypeScript definition itself. The
 * committed copy is `docs/schemas/trajectory.schema.json` (`npm run schemas` writes it; a test fails when it drifts).
 *
 * A line is the header or one step (message, assistant, tool_result, event, outcome). The schema describes what a
 * writer may put on a line (zod's input side): fields with a default may be absent, unknown fields are allowed (the
 * format grows by adding fields within a version).
 *
 * @example
 * const schema = trajectoryLineJsonSchema();
 * writeFileSync('docs/schemas/trajectory.schema.json', trajectoryJsonSchemaText());
 */
import { z } from 'zod';
import { HeaderLineSchema, StepLineSchema, TRAJECTORY_FORMAT, TRAJECTORY_SCHEMA_VERSION } from './trajectory-schema.ts';

/** Where the committed schema lives (relative to the repository root). */
export const TRAJECTORY_JSON_SCHEMA_PATH = 'docs/schemas/trajectory.schema.json';

/** The JSON Schema (draft 2020-12) one trajectory line validates against. */
export function trajectoryLineJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(z.union([HeaderLineSchema, StepLineSchema]), { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  return {
    ...generated,
    $id: `https://flywheel.dev/schemas/${TRAJECTORY_FORMAT}/${TRAJECTORY_SCHEMA_VERSION}.json`,
    title: `${TRAJECTORY_FORMAT} v${TRAJECTORY_SCHEMA_VERSION} line`,
    description: 'One line of a Flywheel trajectory (JSON Lines): the header first, then steps and events, the outcome last. Generated from lib/harness/trajectory/trajectory-schema.ts by `npm run schemas`; do not edit.',
  };
}

/** The schema as the committed file holds it (two-space JSON, a final newline). */
export function trajectoryJsonSchemaText(): string {
  return `${JSON.stringify(trajectoryLineJsonSchema(), null, 2)}\n`;
}
