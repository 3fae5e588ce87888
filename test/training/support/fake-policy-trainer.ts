/**
 * A FAKE policy trainer for the training workflow's tests: a Node process with the job contract of
 * `python -m flywheel_trainer policy-job` (TRAINER_JOB_ENV, blobs as files under `$FLYWHEEL_DATA_DIR/blobs`, exit 0
 * trained, 2 bad input, 1 retryable), so the workflow is tested without the Python trainer. Per step it appends one
 * metrics line (and rewrites `heartbeat.json` beside it) and saves its state (the step reached); it starts after the saved step (a resume), and at the end
 * writes a checkpoint folder (`config.json`, `flywheel.json`) under the output key.
 *
 * What a test wants of one run sits in the blob `fake-trainer/<runId>.json`: `{ exitCode?, stepMs?, holdAtStep? }`:
 * exit with `exitCode` before training; pause `stepMs` between steps; after writing step `holdAtStep`, wait until the
 * blob `fake-trainer/<runId>.release` exists.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const env = process.env;
const root = join(env.FLYWHEEL_DATA_DIR ?? '.', 'blobs');
const path = (key: string) => join(root, ...key.split('/'));
const read = (key: string) => (existsSync(path(key)) ? readFileSync(path(key), 'utf8') : undefined);
function write(key: string, text: string): void {
  mkdirSync(dirname(path(key)), { recursive: true });
  const temp = `${path(key)}.tmp-${process.pid}`;
  writeFileSync(temp, text);
  renameSync(temp, path(key));
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const runId = env.FLYWHEEL_TRAIN_RUN_ID;
const datasetKey = env.FLYWHEEL_DATASET_KEY;
const outputKey = env.FLYWHEEL_OUTPUT_KEY;
const metricsKey = env.FLYWHEEL_METRICS_KEY;
const stateKey = env.FLYWHEEL_STATE_KEY;
if (!runId || !datasetKey || !outputKey || !metricsKey || !stateKey || !env.FLYWHEEL_BASE_MODEL || !env.FLYWHEEL_TRAIN_CONFIG) {
  console.error('missing a FLYWHEEL_* variable of the policy job');
  process.exit(2);
}
if (read(datasetKey) === undefined) {
  console.error(`no dataset manifest ${datasetKey}`);
  process.exit(2);
}
const control = JSON.parse(read(`fake-trainer/${runId}.json`) ?? '{}') as { exitCode?: number; stepMs?: number; holdAtStep?: number };
if (control.exitCode !== undefined) {
  console.error(`failing on purpose with ${control.exitCode}`);
  process.exit(control.exitCode);
}
const config = JSON.parse(env.FLYWHEEL_TRAIN_CONFIG) as { steps: number };
// Steps count from 1, as the real trainer's do (`step` is the number of optimiser steps done).
const state = JSON.parse(read(`${stateKey}/state.json`) ?? '{"step":0}') as { step: number };
let metrics = read(metricsKey) ?? '';
for (let step = state.step + 1; step <= config.steps; step++) {
  metrics += `${JSON.stringify({ step, at: new Date().toISOString(), loss: 1 / step, tokens: 64, stepSeconds: 0.01, decision: 0.5 / step })}\n`;
  write(metricsKey, metrics);
  // The small heartbeat beside the metrics, as the real trainer writes it (trainingRunKeys(runId).heartbeat).
  write(`${metricsKey.slice(0, metricsKey.lastIndexOf('/') + 1)}heartbeat.json`, JSON.stringify({ step, at: new Date().toISOString() }));
  write(`${stateKey}/state.json`, JSON.stringify({ step, attempt: env.AWS_BATCH_JOB_ATTEMPT }));
  if (control.holdAtStep === step) while (read(`fake-trainer/${runId}.release`) === undefined) await sleep(20);
  if (control.stepMs) await sleep(control.stepMs);
}
write(`${outputKey}/config.json`, JSON.stringify({ architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2' }));
write(`${outputKey}/flywheel.json`, JSON.stringify({ runId, base: env.FLYWHEEL_BASE_MODEL, steps: config.steps }));
console.log(`trained ${runId}: ${config.steps} steps`);
