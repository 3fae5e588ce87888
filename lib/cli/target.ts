import type { Command } from 'commander';
import { resolve } from 'node:path';
import { DEFAULT_DATA_DIR, readRuntimeInfo } from '../local/runtime.ts';

/** Where an API call goes: a deployed stage (`--url`, `--api-key`) or the local runtime found in the data folder. */
export interface ApiTarget {
  url: string;
  apiKey: string;
}

export interface TargetFlags {
  url?: string;
  apiKey?: string;
  dataDir?: string;
}

/** The data folder a command works on: `--data-dir`, else FLYWHEEL_DATA_DIR, else the checkout's `.flywheel/`. */
export function dataDirFrom(flags: { dataDir?: string }): string {
  return resolve(flags.dataDir ?? process.env.FLYWHEEL_DATA_DIR ?? DEFAULT_DATA_DIR);
}

/** Resolves the API target, or throws a message that says what to do. */
export function resolveTarget(flags: TargetFlags): ApiTarget {
  const apiKey = flags.apiKey ?? process.env.FLYWHEEL_API_KEY;
  const url = flags.url ?? process.env.FLYWHEEL_API_URL;
  if (url) {
    if (!apiKey) throw new Error('--url needs an API key: pass --api-key or set FLYWHEEL_API_KEY');
    return { url: url.replace(/\/+$/, ''), apiKey };
  }
  const dataDir = dataDirFrom(flags);
  const info = readRuntimeInfo(dataDir);
  if (!info) {
    throw new Error(
      `no local runtime is running on ${dataDir} (start one with \`npm start\`), or pass --url and --api-key`,
    );
  }
  return { url: info.url, apiKey: apiKey ?? info.apiKey };
}

/** One JSON call to the API; returns the status and the parsed body (or the raw text when it is not JSON). */
export async function callApi(
  target: ApiTarget,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${target.url}${path}`, {
    method,
    headers: {
      'x-api-key': target.apiKey,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed };
}

/** Commander's collector for a repeatable option (`--suite a --suite b` → `['a', 'b']`). */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** The options every API-client command takes: a deployed stage's URL and key, or the local runtime's data folder. */
export function targetOptions(command: Command): Command {
  return command
    .option('--url <url>', 'API base URL of a deployed stage (env FLYWHEEL_API_URL); default: the running local runtime')
    .option('--api-key <key>', 'API key (env FLYWHEEL_API_KEY); default: the local key')
    .option('--data-dir <dir>', 'local data folder whose runtime to use (env FLYWHEEL_DATA_DIR)');
}

export interface JsonFlags extends TargetFlags {
  json?: boolean;
}

/**
 * One API call for a CLI command: on an error answer prints the message and each offending field to stderr and sets
 * exit code 1 (undefined back); on `--json` prints the answer as it is (undefined back); else the body, for the
 * command to render.
 *
 * @example
 * const suite = await callForCli<SuiteDetail>(flags, 'GET', `/v1/suites/${id}`);
 * if (suite) process.stdout.write(formatSuiteDetail(suite));
 */
export async function callForCli<T>(flags: JsonFlags, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T | undefined> {
  const { status, body: answer } = await callApi(resolveTarget(flags), method, path, body);
  if (status >= 300) {
    const a = answer as { error?: string; message?: string; issues?: Array<{ path: string; message: string }> };
    process.stderr.write(`${a?.error ?? `HTTP ${status}`}: ${a?.message ?? JSON.stringify(answer)}\n`);
    for (const i of a?.issues ?? []) process.stderr.write(`  ${i.path}: ${i.message}\n`);
    process.exitCode = 1;
    return undefined;
  }
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
    return undefined;
  }
  return answer as T;
}
