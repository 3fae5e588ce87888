/**
 * Fixtures of the decisions tests: an experiment record as `createExperiment` + `startExperiment` leave it, and an
 * analysis shaped like `analyzeExperiment`'s, for the pure planner's cases.
 */
import { ExperimentInput, type ExperimentAnalysis, type ExperimentRecord, type MetricAnalysis } from '../../lib/experiments/schemas.ts';

export function runningExperiment(overrides: Partial<ExperimentInput> = {}, state: Partial<ExperimentRecord> = {}): ExperimentRecord {
  const definition = ExperimentInput.parse({
    id: 'exp-1',
    name: 'new checkpoint',
    arms: [
      { id: 'control', checkpoint: 'ckpt-a', control: true },
      { id: 'treatment', checkpoint: 'ckpt-b' },
    ],
    metrics: { primary: 'accepted', guardrails: [{ metric: 'latency_ms_per_turn', maxRegression: 0.05 }] },
    plannedUnitsPerArm: 1000,
    ramp: [{ percent: 5, minHours: 24 }, { percent: 25, minHours: 24 }, { percent: 50, minHours: 24 }],
    ...overrides,
  });
  return {
    definition,
    status: 'running',
    plannedUnitsPerArm: definition.plannedUnitsPerArm ?? 1000,
    rampStep: 0,
    rampStepSince: '2026-12-01T00:00:00.000Z',
    stoppedArms: [],
    origin: { kind: 'person', by: 'ana' },
    createdAt: '2026-12-01T00:00:00.000Z',
    startedAt: '2026-12-01T00:00:00.000Z',
    revision: 1,
    ...state,
  };
}

type Comparison = MetricAnalysis['comparisons'][number];

export function comparison(arm: string, c: Partial<Comparison>): Comparison {
  return {
    arm,
    control: 'control',
    difference: null,
    relativeLift: null,
    ci: null,
    sequentialCi: null,
    pValue: null,
    adjustedPValue: null,
    chanceToWin: null,
    cuped: { applied: false, varianceReduction: null, theta: null },
    verdict: 'inconclusive',
    rule: 'test',
    ...c,
  };
}

export function metricAnalysis(metric: string, role: MetricAnalysis['role'], direction: 'increase' | 'decrease', comparisons: Comparison[], extra: Partial<MetricAnalysis> = {}): MetricAnalysis {
  return {
    metric,
    role,
    kind: 'ratio',
    direction,
    displayScale: 1,
    arms: [
      { arm: 'control', units: 500, value: 1, se: 0.1 },
      ...comparisons.map((c) => ({ arm: c.arm, units: 500, value: 1, se: 0.1 })),
    ],
    comparisons,
    ...extra,
  };
}

export function analysisOf(experiment: ExperimentRecord, metrics: MetricAnalysis[], srm: Partial<ExperimentAnalysis['srm']> = {}, at = '2026-12-02T00:00:00.000Z'): ExperimentAnalysis {
  const arms = experiment.definition.arms.map((a) => a.id);
  const share = 1 / arms.length;
  return {
    analysisId: `an-${at}`,
    experimentId: experiment.definition.id,
    at,
    from: experiment.startedAt ?? at,
    to: at,
    unitsPerArm: Object.fromEntries(arms.map((a) => [a, 500])),
    plannedUnitsPerArm: experiment.plannedUnitsPerArm,
    progress: 0.5,
    srm: { expectedShares: Object.fromEntries(arms.map((a) => [a, share])), observedUnits: Object.fromEntries(arms.map((a) => [a, 500])), chiSquared: 0, pValue: 1, mismatch: false, ...srm },
    metrics,
    recommendation: { action: 'continue', because: 'test' },
    engine: 'duckdb',
    queryMs: 1,
  };
}

/** A Slack incoming-webhook stand-in: captures every post (the notices people would read). */
export async function fakeSlack(): Promise<{ url: string; posts: Array<{ text: string; blocks: unknown[] }>; close(): Promise<void> }> {
  const { createServer } = await import('node:http');
  const posts: Array<{ text: string; blocks: unknown[] }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      posts.push(JSON.parse(body) as { text: string; blocks: unknown[] });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/hook`, posts, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** The checkpoint registration body the experiments' arms need. */
export const checkpointBody = (id: string) => ({ id, model: 'coder-7b', serving: { kind: 'endpoint', model: `openai:${id}@http://127.0.0.1:1/v1` }, sweep: false });
