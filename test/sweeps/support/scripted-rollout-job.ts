/**
 * A rollout job for the local jobs driver (`definitions.rollout.command`), standing in for
 * `batch-images/rollout/entrypoint.ts` with a scripted model: it reads the shard spec from `FLYWHEEL_SHARD_KEY` in the
 * local data folder (`FLYWHEEL_DATA_DIR`), takes its child's slice (`AWS_BATCH_JOB_ARRAY_INDEX`), reads each task blob
 * and writes the attempt records the harness would under `<runId>.shard-<index>`, each passing at the rate
 * `FLYWHEEL_SCRIPTED_RATES` gives its checkpoint (JSON map, default 0.5). Shards named in
 * `FLYWHEEL_SCRIPTED_FAIL_SHARDS` (comma list), or in the file `scripted-fail-shards` of the data folder while it
 * exists (a fault a test can lift), exit 1, as the real job does when the infrastructure breaks.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openLocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { readShardSpec } from '../../../lib/sweeps/shard-spec.ts';
import { rateScript, scriptedChildAttempts } from './scripted-rollout.ts';

const env = process.env;
const ports = openLocalPorts(env.FLYWHEEL_DATA_DIR!);
try {
  const spec = await readShardSpec(ports.blobs, env.FLYWHEEL_SHARD_KEY!);
  const faultFile = join(env.FLYWHEEL_DATA_DIR!, 'scripted-fail-shards');
  const failing = [...(env.FLYWHEEL_SCRIPTED_FAIL_SHARDS ?? '').split(','), ...(existsSync(faultFile) ? readFileSync(faultFile, 'utf8').trim().split(',') : [])];
  if (failing.includes(spec.shardId)) {
    process.stderr.write(`scripted failure of shard ${spec.shardId}\n`);
    process.exitCode = 1;
  } else {
    const rates = JSON.parse(env.FLYWHEEL_SCRIPTED_RATES ?? '{}') as Record<string, number>;
    const index = Number(env.AWS_BATCH_JOB_ARRAY_INDEX ?? 0);
    const items = await scriptedChildAttempts(ports.blobs, spec, index, rateScript((ck) => rates[ck] ?? 0.5));
    await ports.records.putMany(items);
    process.stdout.write(`shard ${spec.shardId} child ${index}: ${items.length} attempts\n`);
  }
} finally {
  ports.close();
}
