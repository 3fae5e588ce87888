/**
 * The forge as a batch job (AWS Batch on the CPU pool, or the local jobs driver): the same `forgeRepository` the
 * CLI runs, configured from the environment.
 *
 * - `FLYWHEEL_FORGE_SPEC_KEY` (required): blob key of the forge spec JSON (`lib/forge/schemas.ts`).
 * - `FLYWHEEL_FORGE_MODE`: `run` (default) or `recertify` (then `FLYWHEEL_FORGE_SUITE` names the suite; the spec
 *   blob may be `{}` or give `k`).
 * - `FLYWHEEL_FORGE_RUN_ID`: the run id (default `AWS_BATCH_JOB_ID`, else a new one).
 * - `FLYWHEEL_FORGE_STATEMENT_MODEL`: a model spec (`openai:<model>@<url>`, `bedrock:<id>`) that writes statements
 *   and scores quality; without it statements come from the template.
 * - Ports: `FLYWHEEL_DATA_DIR` for local drivers, else `FLYWHEEL_TABLE` + `FLYWHEEL_BUCKET` (DynamoDB, S3).
 *
 * Writes `forge/runs/<runId>/result.json` (counts, task ids, timings) and prints one JSON line; exits 1 with the
 * error on stderr when the run fails (a baseline that does not pass, a repository that cannot be fetched).
 */
import { randomUUID } from 'node:crypto';
import { forgeCandidateSource } from '../../lib/forge/find-forge-candidates.ts';
import { createModel } from '../../lib/models/create-model.ts';
import { forgeRepository } from '../../lib/forge/forge-repository.ts';
import { recertifySuite } from '../../lib/forge/recertify-suite.ts';
import { parseForgeSpec } from '../../lib/forge/schemas.ts';
import { NamespaceSandboxProvider } from '../../lib/harness/sandbox/namespace-sandbox.ts';
import { ConfigurationError, NotFoundError } from '../../lib/errors.ts';
import { rolloutPortsFromEnv } from '../rollout/rollout-ports.ts';

export async function main(env: Record<string, string | undefined> = process.env): Promise<unknown> {
  const specKey = env['FLYWHEEL_FORGE_SPEC_KEY'];
  if (!specKey) throw new ConfigurationError('FLYWHEEL_FORGE_SPEC_KEY is not set');
  const ports = rolloutPortsFromEnv(env);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  try {
    const body = await ports.blobs.get(specKey);
    if (!body) throw new NotFoundError(`forge spec blob ${specKey} does not exist (${ports.describe})`);
    const raw = JSON.parse(Buffer.from(body).toString('utf8')) as Record<string, unknown>;
    const runId = env['FLYWHEEL_FORGE_RUN_ID'] ?? env['AWS_BATCH_JOB_ID'] ?? `forge-${randomUUID()}`;
    const provider = new NamespaceSandboxProvider();
    await provider.sweep();
    if ((env['FLYWHEEL_FORGE_MODE'] ?? 'run') === 'recertify') {
      const suite = env['FLYWHEEL_FORGE_SUITE'];
      if (!suite) throw new ConfigurationError('FLYWHEEL_FORGE_SUITE is not set (recertify mode)');
      const outcomes = await recertifySuite({ suite, provider, ports, k: typeof raw['k'] === 'number' ? raw['k'] : 3, onProgress: (o) => log(`${o.taskId}: ${o.result}${o.reason ? ` (${o.reason})` : ''}`) });
      const summary = { runId, mode: 'recertify', suite, outcomes };
      await ports.blobs.put(`forge/runs/${runId}/result.json`, `${JSON.stringify(summary, null, 2)}\n`, { contentType: 'application/json' });
      return summary;
    }
    const spec = parseForgeSpec(raw);
    log(`forge run ${runId}: ${spec.repo.kind === 'local' ? spec.repo.path : spec.repo.url} → suite ${spec.suite} (${spec.split}), max ${spec.maxTasks} task(s); ports: ${ports.describe}`);
    const result = await forgeRepository({
      spec,
      provider,
      ports,
      runId,
      candidates: forgeCandidateSource(env['FLYWHEEL_FORGE_STATEMENT_MODEL'] ? { model: createModel(env['FLYWHEEL_FORGE_STATEMENT_MODEL']) } : {}),
      onProgress: (e) => {
        if (e.type === 'candidate') log(`[${e.done}/${e.total}] ${e.candidateId}: ${e.verdict}`);
        if (e.type === 'baseline') log(`baseline: ${e.baseline.stable.length} stable, ${e.baseline.flaky.length} flaky`);
      },
    });
    const summary = {
      runId,
      mode: 'run',
      suite: result.suite,
      counts: result.counts,
      tasks: result.tasks.map((t) => t.taskId),
      canaries: result.canaries.map((t) => t.taskId),
      candidatesTried: result.candidates.length,
      certifyMs: result.certifyMs,
      wallMs: result.wallMs,
    };
    await ports.blobs.put(`forge/runs/${runId}/result.json`, `${JSON.stringify(summary, null, 2)}\n`, { contentType: 'application/json' });
    return summary;
  } finally {
    ports.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    process.stdout.write(`${JSON.stringify(await main())}\n`);
  } catch (error) {
    process.stderr.write(`forge job failed: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
