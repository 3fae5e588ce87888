/**
 * The rollout job: runs one shard of an eval in AWS Batch (or as a child process of the local jobs driver — the
 * same file, run the same way: `node batch-images/rollout/entrypoint.ts`).
 *
 * Reads the shard spec (`lib/rollout/shard-spec.ts`) from the blob FLYWHEEL_SHARD_KEY (or inline JSON in
 * FLYWHEEL_SHARD_SPEC), takes its slice of the tasks by AWS_BATCH_JOB_ARRAY_INDEX of FLYWHEEL_SHARD_COUNT (or the
 * spec's `shardCount`), builds its ports from the environment (local over FLYWHEEL_DATA_DIR, else DynamoDB and S3),
 * optionally serves the checkpoint with vLLM beside the harness (FLYWHEEL_VLLM_COMMAND), runs every attempt through
 * the harness and writes the shard result (`runRolloutShard`).
 *
 * Exit codes (`ROLLOUT_EXIT_CODES`): 0 scored (the score says how the model did), 2 some attempts ended as
 * infrastructure errors (a retry resumes), 1 the infrastructure broke (retry), 3 bad spec or environment (no retry).
 */
import { createHash } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ROLLOUT_EXIT_CODES, type RolloutExitCode } from '../../lib/rollout/rollout-exit-codes.ts';
import { runRolloutShard } from '../../lib/rollout/run-rollout-shard.ts';
import type { EvalProgress } from '../../lib/harness/eval/run-eval.ts';
import { parseShardSpec, USER_MODEL_ENV, type ShardSpec } from '../../lib/rollout/shard-spec.ts';
import { ConfigurationError, ValidationError } from '../../lib/errors.ts';
import { NamespaceSandboxProvider } from '../../lib/harness/sandbox/namespace-sandbox.ts';
import { adaptiveConcurrency } from '../../lib/models/adaptive-concurrency.ts';
import { createModel } from '../../lib/models/create-model.ts';
import { JUDGE_MODEL_ENV } from '../../lib/modes/modes-models.ts';
import { rolloutPortsFromEnv, type RolloutPorts } from './rollout-ports.ts';
import { fetchCheckpoint } from './fetch-checkpoint.ts';
import { freePort } from '../../lib/shared/free-port.ts';
import { startVllmSidecar, TRAINER_DIR, trainerServeCommand, VLLM_STAND_IN_ENV, type VllmSidecar } from './vllm-sidecar.ts';
import { DEFAULT_VLLM_PORT } from '../../lib/rollout/vllm-port.ts';

/** Every variable the entry point reads, for the README and the job definition. */
export const ROLLOUT_ENV = {
  FLYWHEEL_SHARD_KEY: 'blob key of the shard spec JSON',
  FLYWHEEL_SHARD_SPEC: 'the shard spec JSON inline (instead of FLYWHEEL_SHARD_KEY)',
  FLYWHEEL_SHARD_COUNT: 'shards in the array job (overrides the spec); AWS_BATCH_JOB_ARRAY_INDEX picks this one',
  FLYWHEEL_DATA_DIR: 'local ports over this data folder; unset: FLYWHEEL_TABLE and FLYWHEEL_BUCKET',
  FLYWHEEL_TABLE: 'DynamoDB table (records)',
  FLYWHEEL_BUCKET: 'S3 bucket (blobs)',
  FLYWHEEL_VLLM_COMMAND: "serve the checkpoint beside the harness with this command line (overrides the spec's vllm.command)",
  FLYWHEEL_CHECKPOINT_DIR: "the checkpoint's folder for the vLLM command (default: the spec's artifactKey unpacked)",
  FLYWHEEL_VLLM_PORT: "its port (overrides the spec's vllm.port; default 8000)",
  FLYWHEEL_VLLM_MODEL: "its served model name (default the spec's vllm.servedModelName, else the first /v1/models lists)",
  FLYWHEEL_VLLM_READY_TIMEOUT_SECONDS: 'how long it may take to load (default 900)',
  [VLLM_STAND_IN_ENV]: "`trainer` (the local jobs driver sets it): without FLYWHEEL_VLLM_COMMAND, serve the spec's vLLM checkpoint with `python3 -m flywheel_trainer serve` instead",
  FLYWHEEL_PYTHON: 'the Python of that stand-in (default python3)',
  FLYWHEEL_SANDBOX_ROOT: 'the harness sandboxes folder (default a fresh one under $TMPDIR)',
  FLYWHEEL_TASKS_BASE_DIR: 'relative task repository paths resolve here (default the working directory)',
} as const;

type Env = Record<string, string | undefined>;

/** vLLM's own default port, and the registry's default `serving.port`. */

/** One log line per attempt event (the job's log is what people read when a shard looks wrong). */
function progressLine(event: EvalProgress): string {
  switch (event.type) {
    case 'skipped':
      return `[${event.done}/${event.total}] ${event.taskId} #${event.n} ${event.status} (finished by an earlier attempt of this job, skipped)`;
    case 'started':
      return `[${event.done}/${event.total}] ${event.taskId} #${event.n} started`;
    case 'try-failed':
      return `        ${event.taskId} #${event.n} try ${event.attempt.try}: infrastructure error (${event.attempt.infrastructureError?.phase}: ${event.attempt.infrastructureError?.message.split('\n')[0]})`;
    case 'finished':
      return `[${event.done}/${event.total}] ${event.taskId} #${event.n} ${event.record.status} (${(event.record.durationMs / 1000).toFixed(1)} s, ${event.record.tries} ${event.record.tries === 1 ? 'try' : 'tries'})`;
  }
}

function intFrom(env: Env, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new ValidationError(`${name} must be a non-negative integer (got "${raw}")`, [{ path: name, message: 'integer' }]);
  return n;
}

async function readSpec(env: Env, ports: RolloutPorts): Promise<ShardSpec> {
  if (env['FLYWHEEL_SHARD_SPEC']) {
    let json: unknown;
    try {
      json = JSON.parse(env['FLYWHEEL_SHARD_SPEC']);
    } catch (error) {
      throw new ValidationError(`FLYWHEEL_SHARD_SPEC is not JSON: ${(error as Error).message}`, [{ path: 'FLYWHEEL_SHARD_SPEC', message: 'JSON' }]);
    }
    return parseShardSpec(json, 'FLYWHEEL_SHARD_SPEC');
  }
  const key = env['FLYWHEEL_SHARD_KEY'];
  if (!key) throw new ValidationError('set FLYWHEEL_SHARD_KEY (a blob holding the shard spec) or FLYWHEEL_SHARD_SPEC', [{ path: 'FLYWHEEL_SHARD_KEY', message: 'required' }]);
  const body = await ports.blobs.get(key);
  if (!body) throw new ValidationError(`shard spec ${key} is not in the blob store (${ports.describe})`, [{ path: 'FLYWHEEL_SHARD_KEY', message: 'missing blob' }]);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(body));
  } catch (error) {
    throw new ValidationError(`shard spec ${key} is not JSON: ${(error as Error).message}`, [{ path: 'FLYWHEEL_SHARD_KEY', message: 'JSON' }]);
  }
  return parseShardSpec(json, key);
}

function isBadInput(error: unknown): boolean {
  return error instanceof ValidationError || error instanceof ConfigurationError;
}

/** Runs the shard described by `env`; resolves to the exit code. */
export async function main(env: Env = process.env, log: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<RolloutExitCode> {
  const jobId = env['AWS_BATCH_JOB_ID'];
  const jobAttempt = intFrom(env, 'AWS_BATCH_JOB_ATTEMPT');
  let ports: RolloutPorts | undefined;
  let vllm: VllmSidecar | undefined;
  let sandboxRoot: string | undefined;
  let ownSandboxRoot = false;
  const stopOnSignal = (signal: NodeJS.Signals) => {
    log(`received ${signal}: stopping`);
    void (vllm?.stop() ?? Promise.resolve()).finally(() => process.exit(128 + (signal === 'SIGINT' ? 2 : 15)));
  };
  process.once('SIGTERM', stopOnSignal);
  process.once('SIGINT', stopOnSignal);
  try {
    ports = rolloutPortsFromEnv(env);
    const spec = await readSpec(env, ports);
    const shardIndex = intFrom(env, 'AWS_BATCH_JOB_ARRAY_INDEX') ?? 0;
    const shardCount = intFrom(env, 'FLYWHEEL_SHARD_COUNT') ?? spec.shardCount ?? 1;
    if (shardCount < 1 || shardIndex >= shardCount) throw new ValidationError(`array index ${shardIndex} is outside the ${shardCount} shard(s): set FLYWHEEL_SHARD_COUNT to the array size`, [{ path: 'FLYWHEEL_SHARD_COUNT', message: 'array size' }]);
    const vllmModel = env['FLYWHEEL_VLLM_MODEL'] || spec.vllm?.servedModelName;
    // Locally (the local jobs driver sets FLYWHEEL_VLLM_STAND_IN) and with no real vLLM configured, the trainer's
    // OpenAI-compatible server stands in for `vllm serve`: same name, token ids and log-probs, on the CPU, on a free port of its own.
    const standIn = !env['FLYWHEEL_VLLM_COMMAND'] && spec.vllm !== undefined && env[VLLM_STAND_IN_ENV] === 'trainer';
    const vllmCommand = env['FLYWHEEL_VLLM_COMMAND'] || (standIn ? trainerServeCommand({ ...(vllmModel ? { servedModelName: vllmModel } : {}), ...(env['FLYWHEEL_PYTHON'] ? { python: env['FLYWHEEL_PYTHON'] } : {}) }) : spec.vllm?.command);
    if (!spec.model && !vllmCommand) throw new ValidationError('the shard spec names no model, and neither its vllm.command nor FLYWHEEL_VLLM_COMMAND serves one', [{ path: 'model', message: 'required without vLLM' }]);
    log(`rollout ${spec.runId} shard ${shardIndex + 1}/${shardCount}${jobId ? ` (job ${jobId}${jobAttempt ? `, attempt ${jobAttempt}` : ''})` : ''}: mode ${spec.mode}, ${spec.attempts} attempt(s) per task, ports: ${ports.describe}`);

    ownSandboxRoot = !env['FLYWHEEL_SANDBOX_ROOT'];
    // Short: the sandbox puts Unix sockets under it, and their paths stop at 107 bytes.
    sandboxRoot = env['FLYWHEEL_SANDBOX_ROOT'] ?? join(tmpdir(), `fw-rollout-${createHash('sha256').update(jobId ?? String(process.pid)).digest('hex').slice(0, 10)}`);
    await mkdir(sandboxRoot, { recursive: true });

    if (vllmCommand) {
      // The variable wins over the spec (an operator running the image by hand), the spec (the checkpoint's
      // `serving.port`, written by plan-shards) over the default; the local stand-in takes a free port of its own,
      // since shards running at once on one machine would otherwise share the checkpoint's.
      const port = intFrom(env, 'FLYWHEEL_VLLM_PORT') ?? (standIn ? await freePort() : (spec.vllm?.port ?? DEFAULT_VLLM_PORT));
      const readySeconds = intFrom(env, 'FLYWHEEL_VLLM_READY_TIMEOUT_SECONDS') ?? 900;
      let checkpointDir = env['FLYWHEEL_CHECKPOINT_DIR'];
      if (!checkpointDir && spec.artifactKey) {
        checkpointDir = await fetchCheckpoint(ports.blobs, spec.artifactKey, join(sandboxRoot, 'checkpoint'));
        log(`checkpoint ${spec.artifactKey} unpacked into ${checkpointDir}`);
      }
      log(`starting ${standIn ? "vLLM's stand-in (the trainer's server)" : 'vLLM'} on port ${port}: ${vllmCommand}`);
      vllm = await startVllmSidecar({
        command: vllmCommand,
        port,
        readyTimeoutMs: readySeconds * 1000,
        env: {
          ...(env as NodeJS.ProcessEnv),
          ...(checkpointDir ? { FLYWHEEL_CHECKPOINT_DIR: checkpointDir } : {}),
          ...(vllmModel ? { FLYWHEEL_VLLM_MODEL: vllmModel } : {}),
          ...(standIn ? { PYTHONDONTWRITEBYTECODE: '1' } : {}),
        },
        ...(standIn ? { cwd: TRAINER_DIR } : {}),
        log: (line) => process.stderr.write(`${line}\n`),
        ...(vllmModel ? { model: vllmModel } : {}),
      });
    }
    const modelSpec = vllm ? `openai:${vllm.model}@${vllm.baseUrl}` : spec.model!;
    const model = adaptiveConcurrency(createModel(modelSpec, { env: env as NodeJS.ProcessEnv }), { initial: spec.concurrency, max: spec.concurrency });
    const provider = new NamespaceSandboxProvider({ root: join(sandboxRoot, 'sandboxes') });
    // The rubric judge of judge-graded tasks: the spec's, else FLYWHEEL_JUDGE_MODEL (the failure-mode judge's setting).
    const judgeSpec = spec.judgeModel ?? env[JUDGE_MODEL_ENV]?.trim();
    const judgeModel = judgeSpec ? createModel(judgeSpec, { env: env as NodeJS.ProcessEnv }) : undefined;
    // The simulated user of behavioural cases: the spec's, else FLYWHEEL_USER_MODEL.
    const userSpec = spec.userModel ?? env[USER_MODEL_ENV]?.trim();
    const userModel = userSpec ? createModel(userSpec, { env: env as NodeJS.ProcessEnv }) : undefined;
    const { exitCode, result, resultKey } = await runRolloutShard({
      spec,
      shardIndex,
      shardCount,
      ports,
      model,
      ...(judgeModel ? { judgeModel } : {}),
      ...(userModel ? { userModel } : {}),
      modelFor: (judgeSpec: string) => createModel(judgeSpec, { env: env as NodeJS.ProcessEnv }),
      provider,
      workDir: join(sandboxRoot, 'sources'),
      baseDir: resolve(env['FLYWHEEL_TASKS_BASE_DIR'] ?? process.cwd()),
      ...(jobId ? { jobId } : {}),
      ...(jobAttempt !== undefined ? { jobAttempt } : {}),
      onProgress: (event) => log(progressLine(event)),
    });
    const c = result.results.counts;
    log(`shard ${shardIndex} ${result.status}: ${result.taskIds.length} task(s), passed ${c.passed}, failed ${c.failed}, ungraded ${c.ungraded}, infrastructure errors ${c['infrastructure-error']}; result ${resultKey}`);
    return exitCode;
  } catch (error) {
    const bad = isBadInput(error);
    log(`${bad ? 'bad input' : 'infrastructure failure'}: ${(error as Error).name}: ${(error as Error).message}`);
    if (!bad && (error as Error).stack) process.stderr.write(`${(error as Error).stack}\n`);
    return bad ? ROLLOUT_EXIT_CODES.badInput : ROLLOUT_EXIT_CODES.infrastructure;
  } finally {
    process.off('SIGTERM', stopOnSignal);
    process.off('SIGINT', stopOnSignal);
    await vllm?.stop().catch(() => {});
    ports?.close();
    if (sandboxRoot && ownSandboxRoot) await rm(sandboxRoot, { recursive: true, force: true }).catch(() => {});
  }
}

if (import.meta.main) {
  process.exitCode = await main();
}

