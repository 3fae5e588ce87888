/**
 * `flywheel jobs list|describe|logs|cancel|submit`: the jobs of the local runtime's data folder (read from
 * `jobs.sqlite` beside a running `npm start`, which runs them), or of AWS Batch with `--aws` (or when
 * FLYWHEEL_GPU_JOB_QUEUE is set): queues and definitions from FLYWHEEL_GPU_JOB_QUEUE, FLYWHEEL_CPU_JOB_QUEUE and
 * FLYWHEEL_JOB_DEFINITIONS.
 *
 * @example
 * npx flywheel jobs list --category evaluation --status RUNNING
 * npx flywheel jobs logs 3f2c…e1 --index 0 --follow
 */
import type { Command } from 'commander';
import { openBatchJobs } from '../drivers/aws/open-aws-drivers.ts';
import { LocalJobs } from '../drivers/local/local-jobs.ts';
import { localJobDefinitionsFromEnv } from '../drivers/local/jobs/job-definitions.ts';
import { COMPUTE_CATEGORIES, COMPUTE_POOLS, JOB_STATUSES, TERMINAL_JOB_STATUSES, type ComputeCategory, type ComputePool, type JobDescription, type JobsPort, type JobStatus } from '../ports/jobs.ts';
import { table } from './table.ts';
import { dataDirFrom } from './target.ts';

/** Where the jobs are: the local data folder's `jobs.sqlite`, or AWS Batch (`--aws`). */
interface JobsTargetFlags {
  dataDir?: string;
  aws?: boolean;
  endpointUrl?: string;
  region?: string;
}


/** Opens the jobs port the flags point at; `close` releases it. */
export function openJobsTarget(flags: JobsTargetFlags, env: NodeJS.ProcessEnv = process.env): { jobs: JobsPort; close: () => Promise<void> } {
  if (flags.aws || (!flags.dataDir && env['FLYWHEEL_GPU_JOB_QUEUE'])) {
    return openBatchJobs(flags, env);
  }
  const jobs = new LocalJobs({ dataDir: dataDirFrom(flags), run: false, definitions: localJobDefinitionsFromEnv(env) });
  return { jobs, close: () => jobs.close() };
}

function time(ms: number | undefined): string {
  return ms === undefined ? '-' : new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

function summary(job: JobDescription): string {
  if (!job.arrayStatusSummary) return job.exitCode === undefined ? '' : `exit ${job.exitCode}`;
  return JOB_STATUSES.filter((s) => job.arrayStatusSummary![s]).map((s) => `${s.toLowerCase()} ${job.arrayStatusSummary![s]}`).join(', ');
}

/** The `jobs list` table. */
export function jobsTable(jobs: JobDescription[]): string {
  return table(
    ['job id', 'name', 'definition', 'category', 'pool', 'status', 'array', 'created'],
    jobs.map((j) => [j.jobId, j.name, j.definition, j.category, j.pool, j.status, j.arraySize ? `${j.arraySize}: ${summary(j)}` : summary(j), time(j.createdAt)]),
  );
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], flag: string): T | undefined {
  if (value === undefined) return undefined;
  if (!allowed.includes(value as T)) throw new Error(`${flag} must be one of ${allowed.join(', ')} (got "${value}")`);
  return value as T;
}

async function withJobs<T>(flags: JobsTargetFlags, work: (jobs: JobsPort) => Promise<T>): Promise<T> {
  const target = openJobsTarget(flags);
  try {
    return await work(target.jobs);
  } finally {
    await target.close();
  }
}

/** The options of every jobs command: the local data folder, or AWS Batch with its endpoint and region. */
function jobsTargetOptions(command: Command): Command {
  return command
    .option('--data-dir <dir>', 'local data folder (env FLYWHEEL_DATA_DIR; default .flywheel/)')
    .option('--aws', 'AWS Batch (queues and definitions from FLYWHEEL_GPU_JOB_QUEUE, FLYWHEEL_CPU_JOB_QUEUE, FLYWHEEL_JOB_DEFINITIONS)')
    .option('--endpoint-url <url>', 'AWS: a custom endpoint (e.g. moto)')
    .option('--region <region>', 'AWS region');
}

export function registerJobsCommands(program: Command): void {
  const jobs = program.command('jobs').description('batch jobs under the five compute categories: list, describe, logs, cancel, submit');

  jobsTargetOptions(jobs.command('list').description('jobs, newest first'))
    .option('--category <category>', COMPUTE_CATEGORIES.join(' | '))
    .option('--status <status>', JOB_STATUSES.join(' | '))
    .option('--pool <pool>', COMPUTE_POOLS.join(' | '))
    .option('--json', 'print JSON')
    .action(async (flags: JobsTargetFlags & { category?: string; status?: string; pool?: string; json?: boolean }) => {
      const category = oneOf<ComputeCategory>(flags.category, COMPUTE_CATEGORIES, '--category');
      const status = oneOf<JobStatus>(flags.status, JOB_STATUSES, '--status');
      const pool = oneOf<ComputePool>(flags.pool, COMPUTE_POOLS, '--pool');
      const listed = await withJobs(flags, (j) => j.list({ ...(category ? { category } : {}), ...(status ? { status } : {}), ...(pool ? { pool } : {}) }));
      process.stdout.write(flags.json ? `${JSON.stringify(listed, null, 2)}\n` : jobsTable(listed));
    });

  jobsTargetOptions(jobs.command('describe').description('one job, with its children for an array job').argument('<jobId>'))
    .option('--json', 'print JSON')
    .action(async (jobId: string, flags: JobsTargetFlags & { json?: boolean }) => {
      const { job, children } = await withJobs(flags, async (j) => ({ job: await j.describe(jobId), children: await j.children(jobId) }));
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ ...job, children }, null, 2)}\n`);
        return;
      }
      const rows: Array<[string, string]> = [
        ['job id', job.jobId],
        ['name', job.name],
        ['definition', job.definition],
        ['category', job.category],
        ['pool', job.pool],
        ['status', job.status],
        ['reason', job.statusReason ?? '-'],
        ['exit code', job.exitCode === undefined ? '-' : String(job.exitCode)],
        ['attempts', job.attempts === undefined ? '-' : String(job.attempts)],
        ['created', time(job.createdAt)],
        ['started', time(job.startedAt)],
        ['stopped', time(job.stoppedAt)],
      ];
      if (job.arraySize) rows.push(['array', `${job.arraySize}: ${summary(job)}`]);
      process.stdout.write(rows.map(([k, v]) => `${k.padEnd(11)} ${v}`).join('\n') + '\n');
      if (children.length > 0) {
        process.stdout.write(`\n${table(['index', 'status', 'exit', 'reason'], children.map((c) => [String(c.index), c.status, c.exitCode === undefined ? '-' : String(c.exitCode), c.statusReason ?? '']))}`);
      }
    });

  jobsTargetOptions(jobs.command('logs').description('log lines of a job (of one child with --index), oldest first').argument('<jobId>'))
    .option('--index <n>', 'array child index')
    .option('--follow', 'keep printing new lines until the job ends')
    .option('--limit <n>', 'lines per page', '1000')
    .action(async (jobId: string, flags: JobsTargetFlags & { index?: string; follow?: boolean; limit: string }) => {
      const arrayIndex = flags.index === undefined ? undefined : Number(flags.index);
      if (arrayIndex !== undefined && (!Number.isInteger(arrayIndex) || arrayIndex < 0)) throw new Error(`--index must be a non-negative integer (got "${flags.index}")`);
      await withJobs(flags, async (j) => {
        let nextToken: string | undefined;
        for (;;) {
          const page = await j.logs(jobId, { ...(arrayIndex !== undefined ? { arrayIndex } : {}), ...(nextToken ? { nextToken } : {}), limit: Number(flags.limit) });
          for (const line of page.lines) process.stdout.write(`${new Date(line.timestamp).toISOString()}  ${line.message}\n`);
          const more = page.lines.length > 0 && page.nextToken !== undefined && page.nextToken !== nextToken;
          nextToken = page.nextToken ?? nextToken;
          if (more) continue;
          if (!flags.follow) return;
          const job = await j.describe(arrayIndex === undefined ? jobId : `${jobId}:${arrayIndex}`).catch(() => j.describe(jobId));
          if (TERMINAL_JOB_STATUSES.includes(job.status)) {
            // One last read after the end, for lines written just before it.
            const last = await j.logs(jobId, { ...(arrayIndex !== undefined ? { arrayIndex } : {}), ...(nextToken ? { nextToken } : {}) });
            for (const line of last.lines) process.stdout.write(`${new Date(line.timestamp).toISOString()}  ${line.message}\n`);
            return;
          }
          await new Promise((r) => setTimeout(r, 1000));
        }
      });
    });

  jobsTargetOptions(jobs.command('cancel').description('stop a job whatever its state (every child of an array job); finished jobs stay as they are').argument('<jobId>'))
    .option('--reason <text>', 'recorded as the status reason', 'cancelled with flywheel jobs cancel')
    .action(async (jobId: string, flags: JobsTargetFlags & { reason: string }) => {
      await withJobs(flags, (j) => j.cancel(jobId, flags.reason));
      process.stdout.write(`cancel requested: ${jobId}\n`);
    });

  jobsTargetOptions(jobs.command('submit').description('submit a job (locally it runs when `npm start` runs on the data folder)'))
    .requiredOption('--name <name>', 'job name')
    .requiredOption('--definition <name>', 'job definition, e.g. rollout')
    .requiredOption('--category <category>', COMPUTE_CATEGORIES.join(' | '))
    .option('--pool <pool>', COMPUTE_POOLS.join(' | '), 'gpu')
    .option('--array-size <n>', '2–10,000 for an array job')
    .option('--env <KEY=VALUE...>', 'environment of the job')
    .option('--timeout-seconds <s>', 'kill an attempt after this long')
    .option('--retries <n>', 'retries of a failed attempt')
    .option('--idempotency-token <token>', 'a second submit with it returns the first job')
    .action(async (flags: JobsTargetFlags & { name: string; definition: string; category: string; pool: string; arraySize?: string; env?: string[]; timeoutSeconds?: string; retries?: string; idempotencyToken?: string }) => {
      const environment = Object.fromEntries(
        (flags.env ?? []).map((pair) => {
          const eq = pair.indexOf('=');
          if (eq <= 0) throw new Error(`--env wants KEY=VALUE (got "${pair}")`);
          return [pair.slice(0, eq), pair.slice(eq + 1)];
        }),
      );
      const { jobId } = await withJobs(flags, (j) =>
        j.submit({
          name: flags.name,
          definition: flags.definition,
          category: oneOf<ComputeCategory>(flags.category, COMPUTE_CATEGORIES, '--category')!,
          pool: oneOf<ComputePool>(flags.pool, COMPUTE_POOLS, '--pool')!,
          ...(Object.keys(environment).length > 0 ? { environment } : {}),
          ...(flags.arraySize ? { arraySize: Number(flags.arraySize) } : {}),
          ...(flags.timeoutSeconds ? { timeoutSeconds: Number(flags.timeoutSeconds) } : {}),
          ...(flags.retries ? { retries: Number(flags.retries) } : {}),
          ...(flags.idempotencyToken ? { idempotencyToken: flags.idempotencyToken } : {}),
        }),
      );
      process.stdout.write(`${jobId}\n`);
    });
}
