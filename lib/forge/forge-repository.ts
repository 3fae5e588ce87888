/**
 * A forge run over one repository: copy it, run the baseline k times, then certify candidates (`concurrency` at a
 * time) until `maxTasks` are certified or the candidates run out; every candidate gets a record with its verdict,
 * certified ones are registered into the suite (records + blobs) and, on request, get a canary.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { BlobsPort } from '../ports/blobs.ts';
import type { RecordsPort } from '../ports/records.ts';
import type { SandboxProvider } from '../harness/sandbox/sandbox.ts';
import { certifyCandidate, forgeTaskId, type CertifyFacts, type CertifyOutcome, type ForgeCandidate } from './certify-candidate.ts';
import { prepareWorkRepo, type WorkRepo } from './forge-git.ts';
import { putBaseline, putForgeRun, recordCandidate, registerTask } from './forge-records.ts';
import type { ForgedTaskRecord } from './record-codecs.ts';
import { makeCanary } from './make-canary.ts';
import type { ForgeEnvironmentRecord } from './environment/forge-environment.ts';
import { rankCandidates, type CandidateRank } from './rank/rank-candidates.ts';
import { runBaseline } from './run-baseline.ts';
import type { ResolvedRunner } from './runner/resolve-runner.ts';
import { candidateLimit, setUpForgeRun } from './set-up-forge-run.ts';
import type { Baseline, CandidateRecordBody, ForgeSpec, RunnableForgeSpec } from './schemas.ts';

/** Finds candidates in the base checkout (the candidates module behind an adapter). */
export type CandidateSource = (work: WorkRepo, spec: RunnableForgeSpec) => Promise<ForgeCandidate[]>;

export interface ForgeRepositoryInput {
  spec: ForgeSpec;
  provider: SandboxProvider;
  ports: { records: RecordsPort; blobs: BlobsPort };
  candidates: CandidateSource;
  runId?: string;
  /** Scratch folder (the work repository, task repositories); removed at the end unless given. */
  workDir?: string;
  /** Where remote repositories are cached between runs (the harness's task-source cache). */
  sourceCacheDir?: string;
  onProgress?: (event: ForgeProgress) => void;
  now?: () => Date;
}

export type ForgeProgress =
  | { type: 'runner'; runner: ResolvedRunner; environment: ForgeEnvironmentRecord }
  | { type: 'baseline'; baseline: Baseline }
  | { type: 'candidates'; found: number; trying: number; refused: number }
  | { type: 'candidate'; candidateId: string; verdict: string; durationMs: number; done: number; total: number };

export interface ForgeRunResult {
  runId: string;
  suite: string;
  /** The spec as run (test command, filter and environment derived where not given). */
  spec: RunnableForgeSpec;
  runner: ResolvedRunner;
  environment: ForgeEnvironmentRecord;
  baseline: Baseline;
  tasks: ForgedTaskRecord[];
  canaries: ForgedTaskRecord[];
  candidates: CandidateRecordBody[];
  counts: Record<string, number>;
  /** Wall clock of the certification phase and of the whole run. */
  certifyMs: number;
  wallMs: number;
}

/** The broken tree's facts (failing share, tests dropped as flaky) an outcome carries onto its record. */
function factsOf(o: CertifyFacts): CertifyFacts {
  return { ...(o.failingShare !== undefined ? { failingShare: o.failingShare } : {}), ...(o.flakyDropped !== undefined ? { flakyDropped: o.flakyDropped } : {}) };
}

function verdictOf(o: CertifyOutcome): string {
  if (o.status === 'certified') return 'certified';
  if (o.status === 'duplicate') return `duplicate:${o.of}`;
  return `${o.status}:${o.reason}`;
}

/**
 * @example
 * const result = await forgeRepository({ spec, provider: new NamespaceSandboxProvider(), ports, candidates: findForgeCandidates });
 * console.log(result.counts); // { certified: 4, 'skipped:no-test-fails': 9, 'rejected:collection-crash': 1, … }
 */
export async function forgeRepository(input: ForgeRepositoryInput): Promise<ForgeRunResult> {
  const { provider, ports } = input;
  const now = input.now ?? (() => new Date());
  const runId = input.runId ?? `forge-${now().toISOString().replace(/[:.]/g, '-')}-${randomUUID().slice(0, 6)}`;
  const t0 = Date.now();
  const startedAt = now().toISOString();
  const workDir = input.workDir ?? (await mkdtemp(join(tmpdir(), 'fw-forge-')));
  const work = await prepareWorkRepo(input.spec.repo, join(workDir, 'work'), input.sourceCacheDir ? { cacheDir: input.sourceCacheDir } : {});
  const suite = input.spec.suite;
  await putForgeRun(ports.records, { runId, suite, origin: work.origin, sourceCommit: work.baseCommit, status: 'running', startedAt });
  try {
    const { runner, spec, environment } = await setUpForgeRun(work, input.spec, provider);
    input.onProgress?.({ type: 'runner', runner, environment });
    const baseline = await runBaseline({ provider, sourceDir: work.dir, commit: work.baseCommit, spec, blobs: ports.blobs, logPrefix: `forge/runs/${runId}/baseline` });
    await putBaseline(ports.records, runId, baseline);
    input.onProgress?.({ type: 'baseline', baseline });

    const found = await input.candidates(work, spec);
    const ranked = rankCandidates(found, { spec, baseline, limit: candidateLimit(spec) });
    const queue = ranked.ordered;
    input.onProgress?.({ type: 'candidates', found: found.length, trying: queue.length, refused: ranked.refused.length });
    const repoName = spec.name ?? (spec.repo.kind === 'local' ? basename(spec.repo.path) : basename(spec.repo.url).replace(/\.git$/, ''));
    const seen = new Map<string, string>();
    const tasks: ForgedTaskRecord[] = [];
    const canaries: ForgedTaskRecord[] = [];
    const records: CandidateRecordBody[] = [];
    const counts: Record<string, number> = {};
    const certifyStart = Date.now();
    let next = 0;
    let done = 0;
    const worker = async () => {
      for (;;) {
        if (tasks.length >= spec.maxTasks) return;
        const entry = queue[next++];
        if (!entry) return;
        const { candidate, rank } = entry;
        const taskId = forgeTaskId(repoName, candidate);
        const outcome = await certifyCandidate({ provider, work, spec, baseline, candidate, environment, runId, taskId, blobs: ports.blobs, scratchDir: join(workDir, 'tasks', taskId), duplicateOf: (k) => seen.get(k) });
        let finalOutcome = outcome;
        if (outcome.status === 'certified') {
          const other = seen.get(outcome.failKey);
          if (other) finalOutcome = { status: 'duplicate', of: other, failToPass: outcome.task.failToPass, log: outcome.artifacts.log, timings: outcome.timings, ...factsOf(outcome) };
          else if (tasks.length >= spec.maxTasks) finalOutcome = { status: 'skipped', reason: 'max-tasks-reached', detail: 'certified, but max tasks was reached while it ran (concurrency)', log: outcome.artifacts.log, timings: outcome.timings, ...factsOf(outcome) };
          else {
            seen.set(outcome.failKey, taskId);
            const record = await registerTask(ports, { task: outcome.task, ...outcome.artifacts, runId, strategy: candidate.strategy, now: now() });
            tasks.push(record);
            if (spec.canaries) {
              const canary = await makeCanary({ task: outcome.task, repoDir: outcome.artifacts.repoDir, provider, spec, work });
              if (canary.ok) canaries.push(await registerTask(ports, { task: canary.task, removalPatch: outcome.artifacts.removalPatch, referencePatch: outcome.artifacts.referencePatch, log: canary.log, repoDir: outcome.artifacts.repoDir, runId, strategy: candidate.strategy, now: now(), canaryOf: taskId }));
            }
          }
        }
        const body = await record(candidate, rank, finalOutcome);
        done++;
        input.onProgress?.({ type: 'candidate', candidateId: candidate.id, verdict: body.verdict, durationMs: finalOutcome.timings.totalMs, done, total: queue.length });
      }
    };
    const record = async (candidate: ForgeCandidate, rank: CandidateRank | undefined, finalOutcome: CertifyOutcome): Promise<CandidateRecordBody> => {
        const verdict = verdictOf(finalOutcome);
        counts[verdict.startsWith('duplicate:') ? 'duplicate' : verdict] = (counts[verdict.startsWith('duplicate:') ? 'duplicate' : verdict] ?? 0) + 1;
        const logKey = `forge/runs/${runId}/candidates/${candidate.id.replaceAll('/', '_')}.log`;
        await ports.blobs.put(logKey, finalOutcome.status === 'certified' ? finalOutcome.artifacts.log : finalOutcome.log, { contentType: 'text/plain; charset=utf-8' });
        const body: CandidateRecordBody = {
          kind: 'forge-candidate',
          runId,
          candidateId: candidate.id,
          strategy: candidate.strategy,
          files: candidate.edits.map((e) => e.path),
          symbols: candidate.symbols,
          ...(candidate.profile ? { entryPoint: candidate.profile.entryPoint } : {}),
          ...(rank ? { rank } : {}),
          status: finalOutcome.status,
          verdict,
          ...(finalOutcome.status === 'rejected' || finalOutcome.status === 'skipped' ? { reason: finalOutcome.reason, detail: finalOutcome.detail } : {}),
          ...(finalOutcome.status === 'duplicate' ? { reason: 'duplicate' as const, detail: `breaks the same tests as ${finalOutcome.of}` } : {}),
          ...(finalOutcome.status === 'certified' ? { taskId: finalOutcome.task.id, failToPass: finalOutcome.task.failToPass } : {}),
          ...(finalOutcome.status !== 'certified' && finalOutcome.failToPass ? { failToPass: finalOutcome.failToPass.slice(0, 200) } : {}),
          ...(finalOutcome.failingShare !== undefined ? { failingShare: finalOutcome.failingShare } : {}),
          ...(finalOutcome.flakyDropped !== undefined ? { flakyDropped: finalOutcome.flakyDropped.slice(0, 200) } : {}),
          durationMs: finalOutcome.timings.totalMs,
          timings: { firstPassMs: finalOutcome.timings.firstPassMs, fullRunMs: finalOutcome.timings.fullRunMs, oracleMs: finalOutcome.timings.oracleMs, ...(finalOutcome.timings.rerunMs !== undefined ? { rerunMs: finalOutcome.timings.rerunMs } : {}) },
          logKey,
          at: now().toISOString(),
        };
        await recordCandidate(ports.records, body);
        records.push(body);
        return body;
    };
    // Refused by the ranking without a run: recorded with their reason, like every candidate.
    for (const r of ranked.refused) {
      await record(r.candidate, undefined, { status: 'rejected', reason: r.reason, detail: r.detail, log: `# ${r.candidate.id}: refused before any run (${r.reason}): ${r.detail}`, timings: { firstPassMs: 0, fullRunMs: 0, oracleMs: 0, totalMs: 0 } });
    }
    await Promise.all(Array.from({ length: Math.max(1, Math.min(spec.concurrency, queue.length)) }, worker));
    const certifyMs = Date.now() - certifyStart;
    await putForgeRun(ports.records, { runId, suite: spec.suite, origin: work.origin, sourceCommit: work.baseCommit, status: 'finished', startedAt, finishedAt: now().toISOString(), counts });
    return { runId, suite: spec.suite, spec, runner, environment, baseline, tasks, canaries, candidates: records, counts, certifyMs, wallMs: Date.now() - t0 };
  } catch (error) {
    await putForgeRun(ports.records, { runId, suite, origin: work.origin, sourceCommit: work.baseCommit, status: 'failed', startedAt, finishedAt: now().toISOString(), error: (error as Error).message });
    throw error;
  } finally {
    if (!input.workDir) await rm(workDir, { recursive: true, force: true });
  }
}
