/**
 * Reference numbers from independent implementations: one real `python3` (scipy, statsmodels, numpy) per test file,
 * given a JSON of cases on stdin, answering a JSON on stdout. Normal draws from a seeded uniform (`lib/shared/seeded-random.ts`) for the data both sides read.
 */
import { execFileSync } from 'node:child_process';

/** Runs `script` in python3 with `input` as JSON on stdin; the script prints one JSON document. */
export function pythonReference<T>(script: string, input: unknown): T {
  const out = execFileSync('python3', ['-c', script], { input: JSON.stringify(input), encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(out) as T;
}


/** Standard normal draws (Box–Muller) from a seeded uniform. */
export function normals(uniform: () => number): () => number {
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const s = spare;
      spare = undefined;
      return s;
    }
    const u = 1 - uniform();
    const v = uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

/** Relative closeness with an absolute floor: |a − b| ≤ rtol·|b| + atol. */
export function close(actual: number, expected: number, rtol: number, atol = 0): boolean {
  return Math.abs(actual - expected) <= rtol * Math.abs(expected) + atol;
}
