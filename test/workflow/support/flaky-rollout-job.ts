/**
 * The scripted rollout job (`test/sweeps/support/scripted-rollout-job.ts`) with one more fault: a shard named in
 * `FLYWHEEL_SCRIPTED_FLAKY_SHARDS` (comma list) fails its first run, as when Batch reclaims a host, and runs normally
 * when the state machine retries it. The first run of each child of such a shard leaves a marker
 * `flaky-<shardId>-<child>` in the data folder (`FLYWHEEL_DATA_DIR`), created exclusively, so a second run, in
 * another process, knows it is the retry.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const env = process.env;
const shardId = env.FLYWHEEL_SHARD_ID ?? '';
const flaky = (env.FLYWHEEL_SCRIPTED_FLAKY_SHARDS ?? '').split(',').includes(shardId);

function firstRun(): boolean {
  try {
    writeFileSync(join(env.FLYWHEEL_DATA_DIR!, `flaky-${shardId}-${env.AWS_BATCH_JOB_ARRAY_INDEX ?? 0}`), '', { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

if (flaky && firstRun()) {
  process.stderr.write(`scripted flaky failure of shard ${shardId} (first run)\n`);
  process.exitCode = 1;
} else {
  await import('../../sweeps/support/scripted-rollout-job.ts');
}
