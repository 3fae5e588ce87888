/**
 * The test's rollout job: one child of a shard's array job, run by the local jobs driver as a child process. It reads
 * its shard spec from blobs, takes its tasks (`shardTasks`: sorted by id, task i to child i mod arraySize), and for each attempt not
 * yet recorded asks the scripted model (over HTTP) whether it passes; the answer `pass` scores it passed. It resumes
 * (finished attempts are skipped) and writes each attempt with put-if-absent, as the real rollout job does.
 * Exits 1 when the model server errors (an infrastructure failure: the shard fails).
 *
 * env: FLYWHEEL_DATA_DIR, FLYWHEEL_SHARD_KEY, FLYWHEEL_TEST_MODEL_URL, AWS_BATCH_JOB_ARRAY_INDEX
 */
import { shardTasks } from '../../../lib/harness/eval/shard-tasks.ts';
import { openLocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import type { TestShardSpec } from './minimal-sweep-steps.ts';

const env = process.env;
const ports = openLocalPorts(env.FLYWHEEL_DATA_DIR!);
try {
  const spec = JSON.parse(new TextDecoder().decode(await ports.blobs.get(env.FLYWHEEL_SHARD_KEY!))) as TestShardSpec;
  const index = Number(env.AWS_BATCH_JOB_ARRAY_INDEX ?? 0);
  for (const task of shardTasks(spec.tasks, index, spec.arraySize)) {
    for (let n = 0; n < spec.attemptsPerTask; n++) {
      const sk = `ATTEMPT#${task}#${spec.mode}#${n}`;
      if (await ports.records.get(`EVAL#${spec.runId}`, sk)) continue;
      const response = await fetch(`${env.FLYWHEEL_TEST_MODEL_URL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: spec.checkpoint, messages: [{ role: 'user', content: `checkpoint=${spec.checkpoint} suite=${spec.suite} mode=${spec.mode} task=${task} n=${n}` }] }),
      });
      if (!response.ok) {
        process.stderr.write(`model answered ${response.status}\n`);
        process.exit(1);
      }
      const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
      const passed = body.choices[0]?.message.content.trim() === 'pass';
      await ports.records.put(
        { pk: `EVAL#${spec.runId}`, sk, kind: 'eval-attempt', taskId: task, mode: spec.mode, n, status: passed ? 'passed' : 'failed', checkpoint: spec.checkpoint, childIndex: index },
        { condition: { kind: 'absent' } },
      );
      process.stdout.write(`${task}#${n}: ${passed ? 'passed' : 'failed'}\n`);
    }
  }
} finally {
  ports.close();
}
