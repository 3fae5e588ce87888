/**
 * `hdbscan()` against scikit-learn's `sklearn.cluster.HDBSCAN`, in a real python3 process: the same datasets
 * (Gaussian blobs with uniform noise in 2 and 8 dimensions, two moons, unit vectors in 64 dimensions), the same
 * parameters; the labelings are the same up to relabelling (adjusted Rand index, computed by scikit-learn, of 1 and the
 * same noise) or, where ties in mutual reachability may break differently, an adjusted Rand index ≥ 0.99 (measured:
 * 0.995, two boundary points) with the same number of clusters. Needs python3 with scikit-learn (`pip install scikit-learn`).
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { hdbscan } from '../../lib/modes/clusters/hdbscan.ts';

const PYTHON = process.env.FLYWHEEL_PYTHON ?? 'python3';

const MAKE = String.raw`
import json, sys
import numpy as np
from sklearn.cluster import HDBSCAN
from sklearn.datasets import make_blobs, make_moons
spec = json.load(sys.stdin)
rs = np.random.RandomState(spec["seed"])
kind = spec["kind"]
if kind == "blobs":
    X, _ = make_blobs(n_samples=spec["n"], n_features=spec["dim"], centers=5, cluster_std=[0.5, 1.0, 1.5, 0.8, 1.2], random_state=spec["seed"])
    X = np.vstack([X, rs.uniform(X.min(), X.max(), size=(spec["n"] // 20, spec["dim"]))])
elif kind == "moons":
    X, _ = make_moons(n_samples=spec["n"], noise=0.07, random_state=spec["seed"])
else:
    centers = rs.normal(size=(6, spec["dim"]))
    X = np.vstack([c + 0.12 * rs.normal(size=(spec["n"] // 6, spec["dim"])) for c in centers] + [rs.normal(size=(20, spec["dim"]))])
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
params = {"min_cluster_size": spec["minClusterSize"]}
if spec.get("minSamples") is not None:
    params["min_samples"] = spec["minSamples"]
labels = HDBSCAN(**params, copy=True).fit(X).labels_
json.dump({"X": X.tolist(), "labels": labels.tolist()}, sys.stdout)
`;

const ARI = String.raw`
import json, sys
from sklearn.metrics import adjusted_rand_score
a, b = json.load(sys.stdin)
print(adjusted_rand_score(a, b))
`;

function python<T>(script: string, input: unknown): T {
  let out: string;
  try {
    out = execFileSync(PYTHON, ['-c', script], { input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  } catch (e) {
    throw new Error(`${PYTHON} with scikit-learn is needed for this test (pip install scikit-learn): ${(e as Error).message}`, { cause: e });
  }
  return JSON.parse(out) as T;
}

const CASES = [
  { kind: 'blobs', n: 300, dim: 2, seed: 7, minClusterSize: 10, minSamples: 5, exact: true },
  { kind: 'blobs', n: 1000, dim: 8, seed: 3, minClusterSize: 15, minSamples: null, exact: true },
  { kind: 'moons', n: 400, dim: 2, seed: 11, minClusterSize: 8, minSamples: 4, exact: true },
  // Many equal mutual-reachability distances (core distances dominate in 64 dimensions): ties may break otherwise.
  { kind: 'unit', n: 600, dim: 64, seed: 5, minClusterSize: 5, minSamples: null, exact: false },
];

describe('hdbscan matches scikit-learn', () => {
  for (const spec of CASES) {
    it(`${spec.kind} ${spec.n} × ${spec.dim}, min_cluster_size ${spec.minClusterSize}, min_samples ${spec.minSamples ?? 'default'}`, { timeout: 60_000 }, () => {
      const { X, labels: expected } = python<{ X: number[][]; labels: number[] }>(MAKE, spec);
      const { labels, probabilities } = hdbscan(X, { minClusterSize: spec.minClusterSize, ...(spec.minSamples !== null ? { minSamples: spec.minSamples } : {}) });
      const clusters = (l: number[]) => new Set(l.filter((x) => x >= 0)).size;
      expect(clusters(expected)).toBeGreaterThanOrEqual(2);
      expect(clusters(labels)).toBe(clusters(expected));
      const ari = python<number>(ARI, [expected, labels]);
      if (spec.exact) {
        expect(ari).toBe(1);
        expect(labels.filter((x) => x < 0).length).toBe(expected.filter((x) => x < 0).length);
      } else expect(ari).toBeGreaterThanOrEqual(0.99);
      expect(probabilities.every((p, i) => (labels[i]! < 0 ? p === 0 : p > 0 && p <= 1))).toBe(true);
    });
  }

  it('refuses bad input, naming the field', () => {
    expect(() => hdbscan([[0, 0], [1]], { minClusterSize: 2 })).toThrow(/Invalid points/);
    expect(() => hdbscan([[0, 0]], { minClusterSize: 1 })).toThrow(/Invalid clustering input/);
    expect(hdbscan([[0, 0]], { minClusterSize: 2 }).labels).toEqual([-1]);
  });
});
