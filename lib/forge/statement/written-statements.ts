/**
 * The last statement written for each candidate, so that the quality score stored with the task can say who wrote
 * it (model or template), after how many rewrites, and from which test sources, without the forge passing them along.
 * Keyed weakly by the candidate object: a record goes when its candidate does.
 */
import type { Candidate, FailingTest } from '../candidate.ts';

export interface WrittenStatement {
  statement: string;
  source: 'model' | 'template';
  rewrites: number;
  /** The failing tests as the writer saw them (sources filled in). */
  tests: FailingTest[];
}

const written = new WeakMap<Candidate, WrittenStatement>();

/**
 * Records the statement written for a candidate.
 *
 * @example
 * rememberStatement(candidate, { statement, source: 'model', rewrites: 1, tests });
 */
export function rememberStatement(candidate: Candidate, record: WrittenStatement): void {
  written.set(candidate, { statement: record.statement, source: record.source, rewrites: record.rewrites, tests: record.tests });
}

/**
 * The record of this exact statement for the candidate, if the writer wrote it.
 *
 * @example
 * writtenStatement(candidate, instruction)?.rewrites; // 2
 */
export function writtenStatement(candidate: Candidate, statement: string): WrittenStatement | undefined {
  const record = written.get(candidate);
  return record && record.statement === statement ? record : undefined;
}
