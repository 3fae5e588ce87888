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

/**
 * ` --url <url>` / ` --data-dir <dir>` when the command was given one, so a next command it prints runs on the same
 * target.
 *
 * @example
 * `follow it: flywheel sweep status ${id} --watch${targetHint(flags)}`
 */
export function targetHint(flags: { dataDir?: string; url?: string }): string {
  return `${flags.url ? ` --url ${flags.url}` : ''}${flags.dataDir ? ` --data-dir ${flags.dataDir}` : ''}`;
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

/** One offending field of an error answer (`ValidationError` issues). */
export interface AnswerIssue {
  path: string;
  message: string;
}

/** The command whose action runs now (set by the program's preAction hook): its options name the fields' flags. */
let actionCommand: Command | undefined;
const fieldFlagMaps = new WeakMap<Command, Record<string, string>>();

/** Called by the program before each action, so an error answer can name the flags of the command that ran. */
export function setActionCommand(command: Command | undefined): void {
  actionCommand = command;
}

/**
 * Names the flag that sets a request field, for the fields whose name is not the option's own (`suites` is filled by
 * the repeatable `--suite`). Fields named like an option (`traceId` ← `--trace-id`) need no entry.
 *
 * @example
 * fieldFlags(cmd, { suites: '--suite', checkpoints: '--checkpoint', attemptsPerTask: '--attempts' });
 */
export function fieldFlags(command: Command, map: Record<string, string>): Command {
  fieldFlagMaps.set(command, { ...fieldFlagMaps.get(command), ...map });
  return command;
}

/**
 * The flag that sets a field of the request, or undefined when no flag of the command sets it (then the field path is
 * what a person fixes, in a file they passed; `null` maps nothing). Tries the path as it is, without its list
 * indexes, and its first field.
 *
 * @example
 * flagForField('suites[1]', sweepStart); // '--suite'
 */
export function flagForField(path: string, command: Command | null | undefined = actionCommand): string | undefined {
  if (!command) return undefined;
  const map = fieldFlagMaps.get(command) ?? {};
  const plain = path.replace(/\[\d+\]/g, '');
  const first = plain.split('.')[0] ?? plain;
  for (const candidate of [path, plain, first]) if (map[candidate]) return map[candidate];
  const option = command.options.find((o) => o.attributeName() === first || o.attributeName() === plain);
  return option?.long;
}

/**
 * The lines a person reads for an error answer: its message and each offending field, fields named by their flag
 * where a flag sets them (never JSON).
 *
 * @example
 * errorLines({ error: 'Flywheel.ValidationError', message: 'Invalid sweep: suites[0]: no suite x', issues: [{ path: 'suites[0]', message: 'no suite x' }] }, 400);
 * // ['Flywheel.ValidationError: Invalid sweep:', '  --suite: no suite x']
 */
export function errorLines(answer: unknown, status: number, command: Command | null | undefined = actionCommand): string[] {
  const a = (typeof answer === 'object' && answer !== null ? answer : { message: typeof answer === 'string' ? answer : '' }) as {
    error?: string;
    message?: string;
    issues?: AnswerIssue[];
  };
  const issues = Array.isArray(a.issues) ? a.issues : [];
  // zod's words for a missing field ("Invalid input: expected string, received undefined") say less than "required".
  const named = issues.map((i) => ({ ...i, message: /received undefined$/.test(i.message) ? 'required' : i.message, name: flagForField(i.path, command) ?? i.path }));
  let message = typeof a.message === 'string' && a.message !== '' ? a.message : `the API answered ${status}`;
  // "Invalid sweep: suites[0]: no suite x; …" repeats the issues listed below it: keep its head only.
  const first = issues[0] ? message.indexOf(`${issues[0].path}:`) : -1;
  if (first > 0) message = message.slice(0, first).replace(/[\s;,]+$/, '');
  for (const i of named) if (i.name !== i.path) message = message.split(`${i.path}:`).join(`${i.name}:`);
  return [`${a.error ?? `HTTP ${status}`}: ${message}`, ...named.map((i) => `  ${i.name}: ${i.message}`)];
}

/**
 * One API call for a CLI command: on an error answer prints the message and each offending field (named by its flag)
 * to stderr and sets exit code 1 (undefined back); on `--json` prints the answer as it is (undefined back); else the
 * body, for the command to render.
 *
 * @example
 * const suite = await callForCli<SuiteDetail>(flags, 'GET', `/v1/suites/${id}`);
 * if (suite) process.stdout.write(formatSuiteDetail(suite));
 */
export async function callForCli<T>(flags: JsonFlags, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T | undefined> {
  const { status, body: answer } = await callApi(resolveTarget(flags), method, path, body);
  if (status >= 300) {
    for (const line of errorLines(answer, status)) process.stderr.write(`${line}\n`);
    process.exitCode = 1;
    return undefined;
  }
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
    return undefined;
  }
  return answer as T;
}
