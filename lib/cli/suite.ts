import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Command } from 'commander';
import type { Suite, SuiteDetail } from '../registry/schemas.ts';
import { openLocalPorts } from '../drivers/local/local-ports.ts';
import { registerSuite } from '../registry/register-suite.ts';
import { suiteView } from '../registry/record-views.ts';
import { formatSuiteDetail, formatSuiteList } from './suite-table.ts';
import { callForCli as call, dataDirFrom, targetOptions, type JsonFlags } from './target.ts';

type RegisterAnswer = { suite: Omit<Suite, 'taskIds'>; created: boolean; previousVersion?: number };

/**
 * A folder suite names a folder of this machine: the API never takes one (its server must not read paths a client
 * names), so it is registered straight into the local data folder's records, the operator's own, without HTTP.
 */
async function registerFolderSuite(flags: JsonFlags, body: unknown): Promise<RegisterAnswer | undefined> {
  if (flags.url ?? process.env.FLYWHEEL_API_URL) {
    throw new Error(
      'a folder suite (tasks.kind folder) names a folder of this machine: it is registered into the local data folder (--data-dir), never through the API; for a deployed stage put the task files under suites/<id>/ in blobs (tasks.kind blobs)',
    );
  }
  const ports = openLocalPorts(dataDirFrom(flags));
  try {
    const { suite, created, previousVersion } = await registerSuite(ports, body);
    const answer: RegisterAnswer = { suite: suiteView(suite), created, ...(previousVersion !== undefined ? { previousVersion } : {}) };
    if (flags.json) {
      process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
      return undefined;
    }
    return answer;
  } finally {
    ports.close();
  }
}

/**
 * Reads a suite file (`SuiteInput` JSON; "-" reads stdin). A relative `tasks.path` of a folder suite is taken from the
 * file's folder, so the runtime finds the tasks wherever it was started.
 */
export function readSuiteFile(file: string): unknown {
  const text = readFileSync(file === '-' ? 0 : file, 'utf8');
  let suite: unknown;
  try {
    suite = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file} is not JSON: ${(e as Error).message}`, { cause: e });
  }
  const tasks = (suite as { tasks?: { kind?: unknown; path?: unknown } } | null)?.tasks;
  if (file !== '-' && tasks?.kind === 'folder' && typeof tasks.path === 'string' && tasks.path !== '' && !isAbsolute(tasks.path)) {
    tasks.path = resolve(dirname(resolve(file)), tasks.path);
  }
  return suite;
}

const suitePath = (id: string) => `/v1/suites/${encodeURIComponent(id)}`;

/**
 * `flywheel suite list|show|register|retire`: the registry's suites through the API (the local runtime's, or a
 * deployed stage's with `--url` and `--api-key`).
 */
export function registerSuiteCommands(program: Command): void {
  const suite = program.command('suite').description('eval suites: register versions, see their status, useful life and best score over time, retire them');

  targetOptions(
    suite
      .command('list')
      .description('every suite: version, visibility, status, tasks, best strict score, useful life')
      .option('--status <status>', 'only active, saturated or retired suites')
      .option('--json', 'print the API answer as JSON'),
  ).action(async (flags: JsonFlags & { status?: string }) => {
    const query = flags.status ? `?${new URLSearchParams({ status: flags.status })}` : '';
    const answer = await call<{ items: Array<Omit<Suite, 'taskIds'>> }>(flags, 'GET', `/v1/suites${query}`);
    if (answer) process.stdout.write(formatSuiteList(answer.items));
  });

  targetOptions(
    suite
      .command('show')
      .description("one suite: status, useful life (creation → saturation) and its best strict score per sweep")
      .argument('<id>', 'suite id')
      .option('--points <n>', 'how many of the newest best-score points to show (default 1000)')
      .option('--json', 'print the API answer as JSON'),
  ).action(async (id: string, flags: JsonFlags & { points?: string }) => {
    const query = flags.points ? `?${new URLSearchParams({ points: flags.points })}` : '';
    const answer = await call<SuiteDetail>(flags, 'GET', `${suitePath(id)}${query}`);
    if (answer) process.stdout.write(formatSuiteDetail(answer));
  });

  targetOptions(
    suite
      .command('register')
      .description(
        'register a suite, or a new version of one, from a JSON file: { id, visibility: public|private, owner, tasks: ' +
          '{ kind: records } | { kind: blobs, prefix: suites/<id>/… } | { kind: folder, path }, taskIds: [...], description?, ' +
          'saturationThreshold?, version? }. Without version, a changed file gets the next version and an unchanged one is a no-op. ' +
          'A folder suite is registered straight into the local data folder (--data-dir), never through the API',
      )
      .requiredOption('-f, --file <path>', 'the suite JSON ("-" reads stdin); a relative folder path is taken from the file\'s folder')
      .option('--json', 'print the API answer as JSON'),
  ).action(async (flags: JsonFlags & { file: string }) => {
    const body = readSuiteFile(flags.file);
    const folder = (body as { tasks?: { kind?: unknown } } | null)?.tasks?.kind === 'folder';
    const answer = folder ? await registerFolderSuite(flags, body) : await call<RegisterAnswer>(flags, 'POST', '/v1/suites', body);
    if (!answer) return;
    const s = answer.suite;
    process.stdout.write(
      answer.created
        ? `registered ${s.id} v${s.version}${answer.previousVersion !== undefined ? ` (was v${answer.previousVersion})` : ''}: ${s.taskCount} task(s), ${s.visibility}, ${s.status}\n`
        : `${s.id} v${s.version} is already registered with this content: nothing changed (${s.status})\n`,
    );
  });

  targetOptions(
    suite
      .command('retire')
      .description('retire a suite: sweeps leave it out of their default selection and refuse it when named; results stay readable')
      .argument('<id>', 'suite id')
      .requiredOption('--reason <text>', 'why (kept on the suite, e.g. "saturated: ck-7 at 93% strict")')
      .option('--by <name>', 'who retires it')
      .option('--json', 'print the API answer as JSON'),
  ).action(async (id: string, flags: JsonFlags & { reason: string; by?: string }) => {
    const body = { reason: flags.reason, ...(flags.by ? { by: flags.by } : {}) };
    const answer = await call<{ suite: Omit<Suite, 'taskIds'>; changed: boolean }>(flags, 'POST', `${suitePath(id)}/retire`, body);
    if (!answer) return;
    const s = answer.suite;
    process.stdout.write(
      answer.changed ? `retired ${s.id} v${s.version} at ${s.retiredAt}: ${s.retiredReason}\n` : `${s.id} v${s.version} was already retired (${s.retiredAt}: ${s.retiredReason}): nothing changed\n`,
    );
  });
}
