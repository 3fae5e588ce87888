/** Shared pieces of the judge registry tests: local ports in a temp folder, a definition, a calibration report. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import type { JudgeDefinitionInput, JudgeRef } from '../../lib/judges/judge-identity.ts';
import type { CalibrationReport } from '../../lib/judges/schemas.ts';

export function tempRegistryPorts(): { ports: LocalPorts; dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'flywheel-judges-'));
  const ports = openLocalPorts(dir);
  return {
    ports,
    dir,
    cleanup: () => {
      ports.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function definition(overrides: Partial<JudgeDefinitionInput> = {}): JudgeDefinitionInput {
  return {
    name: 'scope-judge',
    kind: 'rubric',
    model: 'openai:judge@http://127.0.0.1:9/v1',
    prompt: 'Grade the attempt on each criterion; quote the evidence.',
    rubric: [
      { id: 'scope', criterion: 'Changes only what the instruction asks for', weight: 2 },
      { id: 'tests', criterion: 'Leaves the tests passing', weight: 1 },
    ],
    decoding: { temperature: 0, maxTokens: 1024 },
    outputSchema: { type: 'object', properties: { verdict: { type: 'string', enum: ['pass', 'fail'] }, reason: { type: 'string' } }, required: ['verdict'] },
    ...overrides,
  };
}

let reports = 0;

/** A report of `judge` with one agreement per criterion id: kappa `estimate` with the interval [low, high]. */
export function report(
  judge: JudgeRef,
  kappa: { estimate: number; low: number; high?: number },
  options: { ids?: string[]; n?: number; cost?: number; createdAt?: string } = {},
): CalibrationReport {
  reports++;
  return {
    id: `cal-${reports}`,
    judge,
    goldSet: 'gold-scope',
    createdAt: options.createdAt ?? new Date(Date.UTC(2026, 11, 3, 12, 0, reports)).toISOString(),
    bootstrap: { resamples: 1000, seed: 7 },
    criteria: (options.ids ?? ['scope', 'tests']).map((id) => ({
      id,
      n: options.n ?? 60,
      kappa: { estimate: kappa.estimate, low: kappa.low, high: kappa.high ?? Math.min(1, kappa.estimate + 0.1) },
      alpha: { estimate: kappa.estimate, low: kappa.low, high: kappa.high ?? Math.min(1, kappa.estimate + 0.1) },
      accuracy: 0.9,
      perClass: { pass: { precision: 0.9, recall: 0.9, support: 30 }, fail: { precision: 0.9, recall: 0.9, support: 30 } },
      confusion: { labels: ['pass', 'fail'], matrix: [[27, 3], [3, 27]] },
    })),
    ...(options.cost !== undefined ? { costPerVerdictUsd: options.cost } : {}),
  };
}
