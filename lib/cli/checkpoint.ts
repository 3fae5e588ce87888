import type { Command } from 'commander';
import type { Checkpoint, Result, StartedSweep } from '../registry/schemas.ts';
import { cellText, fieldLines } from './format.ts';
import { formatResultsTable } from './results-table.ts';
import { table } from './table.ts';
import { callForCli, collect, fieldFlags, targetHint, targetOptions, type JsonFlags } from './target.ts';

interface RegisterFlags extends JsonFlags {
  model: string;
  serve?: string;
  vllm?: boolean;
  parent?: string;
  trainingRun?: string;
  artifactKey?: string;
  sweep: boolean;
  topModel?: boolean;
  meta: string[];
}

type RegisterAnswer = { checkpoint: Checkpoint; created: boolean; sweeps?: StartedSweep[] };

const checkpointPath = (id: string) => `/v1/checkpoints/${encodeURIComponent(id)}`;

/** `k=v` pairs of `--meta` into an object (a value that reads as a number or a boolean is one). */
export function parseMeta(pairs: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new Error(`--meta takes key=value, got ${p}`);
    const raw = p.slice(eq + 1);
    out[p.slice(0, eq)] = raw === 'true' ? true : raw === 'false' ? false : raw !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
  }
  return out;
}

/** The body of `POST /v1/checkpoints` from the flags (fields left out are named by the API's 400, by flag). */
export function checkpointBody(id: string, flags: RegisterFlags): Record<string, unknown> {
  if (flags.vllm && flags.serve) throw new Error('give --serve <spec> (a running endpoint) or --vllm (served from --artifact-key), not both');
  return {
    id,
    model: flags.model,
    ...(flags.vllm ? { serving: { kind: 'vllm' } } : flags.serve ? { serving: { kind: 'endpoint', model: flags.serve } } : {}),
    ...(flags.parent ? { parent: flags.parent } : {}),
    ...(flags.trainingRun ? { trainingRun: flags.trainingRun } : {}),
    ...(flags.artifactKey ? { artifactKey: flags.artifactKey } : {}),
    sweep: flags.sweep,
    ...(flags.topModel ? { topModel: true } : {}),
    ...(flags.meta.length ? { metadata: parseMeta(flags.meta) } : {}),
  };
}

/** What `checkpoint register` prints: the checkpoint, and the sweep it started with the command that follows it. */
export function formatRegistered(answer: RegisterAnswer, hint = ''): string {
  const c = answer.checkpoint;
  const lines = [answer.created ? `registered ${c.id} (model ${c.model})` : `${c.id} is already registered with these fields: nothing changed`];
  const sweeps = answer.sweeps ?? [];
  for (const s of sweeps) {
    lines.push(`sweep ${s.sweepId} ${answer.created ? 'started' : 'runs'} on ${s.suites.length} suite(s): ${s.suites.join(', ')}`);
    lines.push(`follow it: flywheel sweep status ${s.sweepId} --watch${hint}`);
  }
  if (sweeps.length === 0) lines.push('no sweep started (asked for none, or no suite is active)');
  return `${lines.join('\n')}\n`;
}

/** One line per checkpoint: id, model, lineage, how it is served, status, when. */
export function formatCheckpointList(items: Checkpoint[]): string {
  return table(
    ['id', 'model', 'parent', 'training run', 'serving', 'status', 'registered'],
    items.map((c) => [c.id, c.model, c.parent ?? '', c.trainingRun ?? '', servingText(c), c.status, c.registeredAt]),
  );
}

function servingText(c: Checkpoint): string {
  return c.serving.kind === 'endpoint' ? c.serving.model : `vllm (${c.serving.gpus} GPU, port ${c.serving.port})`;
}

/** One checkpoint as aligned fields, then its newest result per suite. */
export function formatCheckpointDetail(c: Checkpoint, results: Result[]): string {
  const meta = Object.keys(c.metadata).length ? cellText(c.metadata) : '';
  const head = fieldLines([
    ['id', c.id],
    ['model', c.model],
    ['parent', c.parent],
    ['training run', c.trainingRun],
    ['artifact', c.artifactKey],
    ['serving', servingText(c)],
    ['status', c.status],
    ['registered', c.registeredAt],
    ['metadata', meta],
  ]);
  return `${head}\n${results.length ? formatResultsTable(results) : 'no results yet\n'}`;
}

/**
 * `flywheel checkpoint register|list|show`: the registry's checkpoints through the API; registering one starts its
 * sweep (unless `--no-sweep`), and the answer names it.
 */
export function registerCheckpointCommands(program: Command): void {
  const checkpoint = program.command('checkpoint').description('checkpoints: register one (which sweeps it), list them, show one with its results');

  const register = targetOptions(
    checkpoint
      .command('register')
      .description('register a checkpoint served by a running endpoint (--serve) or by vLLM from its weights (--vllm --artifact-key); starts a sweep of it on every active suite unless --no-sweep')
      .argument('<id>', 'checkpoint id, e.g. coder-7b:step-1200')
      .requiredOption('--model <model>', 'the model family (base model) it belongs to')
      .option('--serve <spec>', 'a running endpoint as a model spec: openai:<model>@<base URL> or bedrock:<modelId>')
      .option('--vllm', 'served by vLLM inside the rollout job, from --artifact-key')
      .option('--parent <id>', 'the checkpoint it was trained from')
      .option('--training-run <id>', 'the training run that produced it')
      .option('--artifact-key <key>', 'blob key of its weights')
      .option('--no-sweep', 'register quietly: start no sweep')
      .option('--top-model', 'the new top model (starts a judge derivation)')
      .option('--meta <key=value>', 'free metadata (repeatable)', collect, [])
      .option('--json', 'print the API answer as JSON'),
  );
  fieldFlags(register, { id: '<id>', serving: '--serve', 'serving.model': '--serve', 'serving.kind': '--serve', metadata: '--meta', sweep: '--no-sweep' });
  register.action(async (id: string, flags: RegisterFlags) => {
    const answer = await callForCli<RegisterAnswer>(flags, 'POST', '/v1/checkpoints', checkpointBody(id, flags));
    if (answer) process.stdout.write(formatRegistered(answer, targetHint(flags)));
  });

  targetOptions(
    checkpoint
      .command('list')
      .description('registered checkpoints, newest first')
      .option('--model <model>', 'only this model family')
      .option('--limit <n>', 'page size (default 50)')
      .option('--cursor <cursor>', 'the next page, from a previous list')
      .option('--json', 'print the API answer as JSON'),
  ).action(async (flags: JsonFlags & { model?: string; limit?: string; cursor?: string }) => {
    const params = new URLSearchParams();
    for (const k of ['model', 'limit', 'cursor'] as const) if (flags[k]) params.set(k, flags[k]);
    const answer = await callForCli<{ items: Checkpoint[]; cursor?: string }>(flags, 'GET', `/v1/checkpoints${params.size ? `?${params}` : ''}`);
    if (!answer) return;
    process.stdout.write(formatCheckpointList(answer.items));
    process.stdout.write(`${answer.items.length} checkpoint(s)${answer.cursor ? `; next page: --cursor ${answer.cursor}` : ''}\n`);
  });

  targetOptions(
    checkpoint
      .command('show')
      .description('one checkpoint: lineage, serving, status, and its newest result on each suite (strict beside lenient)')
      .argument('<id>', 'checkpoint id')
      .option('--json', 'print the API answer as JSON'),
  ).action(async (id: string, flags: JsonFlags) => {
    const c = await callForCli<Checkpoint>(flags, 'GET', checkpointPath(id));
    if (!c) return;
    const results = await callForCli<{ items: Result[] }>(flags, 'GET', `/v1/results?${new URLSearchParams({ checkpoint: id, limit: '1000' })}`);
    if (results) process.stdout.write(formatCheckpointDetail(c, results.items));
  });
}
