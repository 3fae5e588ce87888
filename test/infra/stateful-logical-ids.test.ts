/**
 * The synth diff test: every stateful resource recorded in `stateful-resources.json` (logical id and type, per stage
 * and stack) is still synthesized with that id and type, so a refactor of the constructs cannot make CloudFormation
 * replace a table, bucket, queue, log group… (the list and why: `STATEFUL_RESOURCE_TYPES`).
 *
 * New stateful resources are recorded with `UPDATE_STATEFUL_SNAPSHOT=1 npx vitest run
 * test/infra/stateful-logical-ids.test.ts`, which adds them and refuses to drop or change a recorded one. A resource
 * that is meant to go is deleted from the JSON by hand, in the commit that removes it, where a reviewer sees it.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  compareStateful,
  readStatefulSnapshot,
  STATEFUL_RESOURCE_TYPES,
  STATEFUL_SNAPSHOT_PATH,
  type StatefulSnapshot,
  type StatefulSnapshotFile,
  statefulResourcesOf,
  UPDATE_STATEFUL_SNAPSHOT_COMMAND,
  withAdditions,
} from './stateful-resources.ts';
import { synthFlywheel, type SynthesizedStage } from './synth-flywheel.ts';

const stageNames = ['dev', 'prod'] as const;
const updating = process.env.UPDATE_STATEFUL_SNAPSHOT === '1';
const synthesized: SynthesizedStage[] = [];
const current: StatefulSnapshot = {};

beforeAll(() => {
  for (const name of stageNames) {
    const stage = synthFlywheel(name);
    synthesized.push(stage);
    current[name] = statefulResourcesOf(stage);
  }
  // Two synths are CPU-bound: on a loaded machine they take longer than the default hook timeout.
}, 180_000);
afterAll(() => {
  for (const s of synthesized) rmSync(s.outdir, { recursive: true, force: true });
});

/** The committed snapshot; only the update command may start from none. */
function recordedSnapshot(): StatefulSnapshotFile {
  if (existsSync(STATEFUL_SNAPSHOT_PATH)) return readStatefulSnapshot();
  if (updating) return { about: '', types: [], stages: {} };
  throw new Error(`test/infra/stateful-resources.json is missing: ${UPDATE_STATEFUL_SNAPSHOT_COMMAND}`);
}

describe('stateful logical ids (synth diff against test/infra/stateful-resources.json)', () => {
  it('keeps every recorded stateful resource under its logical id and type', () => {
    const recorded = recordedSnapshot().stages;
    const { missing, changed } = compareStateful(recorded, current);
    expect(
      [...missing, ...changed],
      'CloudFormation would replace these (a new, empty resource): keep their construct ids and scopes where they were',
    ).toEqual([]);
  });

  it('has every stateful resource recorded (the update command adds them, never drops or changes one)', () => {
    const recorded = recordedSnapshot().stages;
    const { missing, changed, unrecorded } = compareStateful(recorded, current);
    if (updating) {
      // A recorded resource that is meant to go is deleted from the JSON by hand, where a reviewer sees it.
      expect([...missing, ...changed], 'the snapshot is not updated over a replaced resource').toEqual([]);
      const file: StatefulSnapshotFile = {
        about: `Stateful resources by stage, stack and logical id, checked by stateful-logical-ids.test.ts. Add new ones with: ${UPDATE_STATEFUL_SNAPSHOT_COMMAND}`,
        types: Object.keys(STATEFUL_RESOURCE_TYPES),
        stages: withAdditions(recorded, current),
      };
      writeFileSync(STATEFUL_SNAPSHOT_PATH, `${JSON.stringify(file, null, 2)}\n`);
    } else {
      expect(unrecorded, `record them: ${UPDATE_STATEFUL_SNAPSHOT_COMMAND}`).toEqual([]);
    }
  });

  it('records the stateful types the check looks for', () => {
    // A type dropped from STATEFUL_RESOURCE_TYPES would silently stop the check for its resources.
    expect(Object.keys(STATEFUL_RESOURCE_TYPES)).toEqual(expect.arrayContaining(recordedSnapshot().types));
  });
});
