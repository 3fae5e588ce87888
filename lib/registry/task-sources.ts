/**
 * Where tasks registered through the API may take their repositories from: the configured sources only.
 *
 * - a git remote whose URL matches a pattern of the allow-list (`FLYWHEEL_TASK_SOURCES`, comma-separated, e.g.
 *   `https://github.com/acme/*,https://git.example.com/**`; `*` is any run of characters but `/`, `**` any run);
 *   only `https://` and `ssh://` remotes, never `file://` or a bare path (the harness reads those from the disk of
 *   the machine that runs it);
 * - a blob under the suite's own prefix (`suites/<suite>/`, or the forge's `forge/suites/<suite>/`) of the tenant;
 * - never a server path (`repo.kind: local`), and a suite's tasks never a folder of the server (`tasks.kind: folder`)
 *   nor blobs under another prefix than the suite's own (`suites/<suite>/`), where no API client can write.
 *
 * The CLI and the forge on the operator's machine register folder suites and local repositories by calling the use
 * cases directly (`registerSuiteFromFolder`), not through the API.
 */
import type { FieldIssue } from '../shared/field-issues.ts';
import { ValidationError } from '../errors.ts';
import { forEachLimited } from '../shared/for-each-limited.ts';
import type { Ports } from '../ports/ports.ts';
import { taskRecord } from './record-codecs.ts';
import { registryKeys } from './record-keys.ts';
import type { SuiteTasksSource } from './schemas.ts';

/** The environment variable that lists the git remotes tasks registered through the API may use. */
export const TASK_SOURCES_ENV = 'FLYWHEEL_TASK_SOURCES';

export interface TaskSources {
  /** URL patterns of allowed git remotes. Empty: no git remote is allowed. */
  gitRemotes: string[];
}

export function taskSourcesFromEnv(env: Record<string, string | undefined> = process.env): TaskSources {
  return { gitRemotes: (env[TASK_SOURCES_ENV] ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '') };
}

/** The blob prefix of a suite's own task files (in its tenant's blobs). */
export function suiteOwnPrefix(suiteId: string): string {
  return `suites/${suiteId}/`;
}

function patternRegex(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (c === '*') re += '[^/]*';
    else re += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Whether a git URL is a remote the allow-list names. */
export function gitRemoteAllowed(url: string, sources: TaskSources): boolean {
  if (!/^(https|ssh):\/\/[^/\s]+\/\S+$/.test(url) || url.includes('..') || /\s/.test(url)) return false;
  return sources.gitRemotes.some((p) => patternRegex(p).test(url));
}

/** Why a task's repository is not a configured source, naming `path`, or undefined when it is. */
export function repoIssue(repo: unknown, suiteId: string, sources: TaskSources, path = 'repo'): FieldIssue | undefined {
  const r = repo as { kind?: unknown; url?: unknown; key?: unknown } | null;
  if (r === null || typeof r !== 'object') return { path, message: 'is not a repository source' };
  if (r.kind === 'git' && typeof r.url === 'string') {
    if (gitRemoteAllowed(r.url, sources)) return undefined;
    return {
      path: `${path}.url`,
      message:
        sources.gitRemotes.length === 0
          ? `no git remote is allowed: the server lists none (${TASK_SOURCES_ENV})`
          : `is not an allowed git remote (https:// or ssh:// matching ${sources.gitRemotes.join(', ')})`,
    };
  }
  if (r.kind === 'blob' && typeof r.key === 'string') {
    const own = [suiteOwnPrefix(suiteId), `forge/${suiteOwnPrefix(suiteId)}`];
    if (own.some((p) => (r.key as string).startsWith(p)) && !(r.key as string).split('/').includes('..')) return undefined;
    return { path: `${path}.key`, message: `must be a blob under the suite's own prefix ${own.join(' or ')}` };
  }
  if (r.kind === 'local') return { path: `${path}.kind`, message: 'a path on the server is never a task source through the API' };
  return { path, message: 'is not a repository source' };
}

/**
 * The checks of a suite registered through the API (`POST /v1/suites`): its tasks' source (never a server folder,
 * blobs only under the suite's own prefix `suites/<id>/`) and the repository of every task already stored. Throws one
 * `ValidationError` naming every offending field.
 *
 * @example
 * await checkApiSuite(ports, { id: 'smoke', tasks: { kind: 'blobs', prefix: 'suites/smoke/' }, taskIds: ['t1'] }, taskSourcesFromEnv());
 */
export async function checkApiSuite(
  ports: Pick<Ports, 'records' | 'blobs'>,
  suite: { id: string; tasks: SuiteTasksSource; taskIds: string[] },
  sources: TaskSources,
): Promise<void> {
  const issues: FieldIssue[] = [];
  const source = suite.tasks;
  if (source.kind === 'folder') {
    issues.push({ path: 'tasks.kind', message: 'a folder of the server is never a suite through the API: put the tasks in records or under the suite\'s blob prefix' });
  } else if (source.kind === 'blobs' && (!source.prefix.startsWith(suiteOwnPrefix(suite.id)) || source.prefix.split('/').includes('..'))) {
    issues.push({ path: 'tasks.prefix', message: `must be under the suite's own prefix ${suiteOwnPrefix(suite.id)}` });
  }
  if (issues.length === 0) {
    await forEachLimited(suite.taskIds, 16, async (id) => {
      const task = await storedTask(ports, suite.id, source, id);
      if (task === undefined) return; // not written yet: the writers (forge, approvals) check their own sources
      if (task === null) {
        issues.push({ path: `tasks[${id}]`, message: 'is not a readable task' });
        return;
      }
      const issue = repoIssue(task.repo, suite.id, sources, `tasks[${id}].repo`);
      if (issue) issues.push(issue);
    });
  }
  if (issues.length > 0) {
    issues.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    throw new ValidationError(`Invalid suite: ${issues.slice(0, 5).map((i) => `${i.path}: ${i.message}`).join('; ')}${issues.length > 5 ? ` and ${issues.length - 5} more` : ''}`, issues);
  }
}

/** A stored task's JSON (undefined: none stored; null: stored but unreadable). */
export async function storedTask(
  ports: Pick<Ports, 'records' | 'blobs'>,
  suiteId: string,
  source: SuiteTasksSource,
  id: string,
): Promise<Record<string, unknown> | undefined | null> {
  const fromBlob = async (key: string) => {
    const bytes = await ports.blobs.get(key);
    if (!bytes) return undefined;
    try {
      const v = JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown;
      return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : null;
    } catch {
      return null;
    }
  };
  if (source.kind === 'blobs') return fromBlob(`${source.prefix}${id}.json`);
  if (source.kind !== 'records') return null;
  const key = registryKeys.task(suiteId, id, source.sk);
  const record = taskRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  if (!record) return undefined;
  if (record.task) return record.task;
  if (record.taskKey !== undefined) return (await fromBlob(record.taskKey)) ?? null;
  return record;
}
