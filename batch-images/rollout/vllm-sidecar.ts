/**
 * Serves the checkpoint under test beside the harness, on the job's GPU: starts FLYWHEEL_VLLM_COMMAND (for example
 * `vllm serve /models/ckpt --port $FLYWHEEL_VLLM_PORT --served-model-name ckpt --enable-auto-tool-choice
 * --tool-call-parser hermes`) in its own process group, waits until `GET /v1/models` answers with a model, and
 * stops the whole group at the end (SIGTERM, then SIGKILL). Its output goes to this process's stderr, prefixed.
 *
 * @example
 * const vllm = await startVllmSidecar({ command: process.env.FLYWHEEL_VLLM_COMMAND!, port: 8000 });
 * try { createModel(`openai:${vllm.model}@${vllm.baseUrl}`); … } finally { await vllm.stop(); }
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TransientError } from '../../lib/errors.ts';

/**
 * Set (to `trainer`) by the local jobs driver's `rollout` definition: without FLYWHEEL_VLLM_COMMAND, a vLLM-served
 * checkpoint is served by the trainer's OpenAI-compatible server (`trainerServeCommand`) instead of `vllm serve`,
 * so the loop turns on a machine without a GPU. Unset on AWS: the job runs the spec's `vllm serve`.
 */
export const VLLM_STAND_IN_ENV = 'FLYWHEEL_VLLM_STAND_IN';

/** The trainer package's folder (`python3 -m flywheel_trainer` runs from here). */
export const TRAINER_DIR = fileURLToPath(new URL('../trainer/', import.meta.url));

/**
 * The command line of vLLM's local stand-in, `python3 -m flywheel_trainer serve` over `$FLYWHEEL_CHECKPOINT_DIR` on
 * `$FLYWHEEL_VLLM_PORT` (batch-images/trainer/flywheel_trainer/policy/serve.py: token ids and log-probs as vLLM's);
 * run it with `cwd: TRAINER_DIR`.
 *
 * @example
 * startVllmSidecar({ command: trainerServeCommand({ servedModelName: 'ckpt-7' }), cwd: TRAINER_DIR, port: 8000 });
 */
export function trainerServeCommand(options: { servedModelName?: string; python?: string } = {}): string {
  const quote = (a: string) => (/^[A-Za-z0-9._:/=@+-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`);
  const name = options.servedModelName ? ` --served-model-name ${quote(options.servedModelName)}` : '';
  return `exec ${quote(options.python || 'python3')} -m flywheel_trainer serve --model "$FLYWHEEL_CHECKPOINT_DIR" --port "$FLYWHEEL_VLLM_PORT"${name}`;
}

export interface VllmSidecarOptions {
  /** A shell command line (bash -c); FLYWHEEL_VLLM_PORT is set in its environment. */
  command: string;
  port: number;
  /** The served model name; default the first id `/v1/models` lists. */
  model?: string;
  /** How long loading the weights may take; default 15 minutes. */
  readyTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Working directory of the command; default this process's. */
  cwd?: string;
  log?: (line: string) => void;
}

export interface VllmSidecar {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  model: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startVllmSidecar(options: VllmSidecarOptions): Promise<VllmSidecar> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const baseUrl = `http://127.0.0.1:${options.port}/v1`;
  const child = spawn('bash', ['-c', options.command], {
    detached: true,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...(options.env ?? process.env), FLYWHEEL_VLLM_PORT: String(options.port) },
  });
  for (const stream of [child.stdout!, child.stderr!]) {
    let partial = '';
    stream.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) log(`[vllm] ${line}`);
    });
  }
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    });
  });
  const stop = async (): Promise<void> => {
    if (exited || child.pid === undefined) return;
    const kill = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // gone
      }
    };
    kill('SIGTERM');
    const timer = setTimeout(() => kill('SIGKILL'), 10_000);
    await exitPromise;
    clearTimeout(timer);
    kill('SIGKILL');
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 15 * 60_000);
  for (;;) {
    if (exited) throw new TransientError(`vLLM exited before it was ready (code ${exited.code}${exited.signal ? `, signal ${exited.signal}` : ''}): ${options.command}`);
    try {
      const response = await fetch(`${baseUrl}/models`, { signal: AbortSignal.timeout(2000) });
      if (response.ok) {
        const body = (await response.json()) as { data?: Array<{ id?: string }> };
        const listed = body.data?.map((m) => m.id).filter((id): id is string => typeof id === 'string') ?? [];
        const model = options.model ?? listed[0];
        if (model && listed.includes(model)) {
          log(`vLLM ready at ${baseUrl} serving ${model}`);
          return { baseUrl, model, pid: child.pid!, stop };
        }
        if (options.model && listed.length > 0) {
          await stop();
          throw new TransientError(`vLLM serves ${listed.join(', ')}, not ${options.model}`);
        }
      } else {
        await response.arrayBuffer();
      }
    } catch (error) {
      if (error instanceof TransientError) throw error;
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new TransientError(`vLLM was not ready at ${baseUrl} within ${options.readyTimeoutMs ?? 900_000} ms`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
