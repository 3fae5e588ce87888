/**
 * `hdbscan()` against scikit-learn's `sklearn.cluster.HDBSCAN`, in a real python3 process: the same datasets
 * (Gaussian blobs with uniform noise in 2 and 8 dimensions, two moons, unit vectors in 64 dimensions), the same
 * parameters. Labels are compared by adjusted Rand index (computed by scikit-learn), so up to relabelling and up to
 * ties: the minimum spanning tree's equal-weight edges are ordered differently here than in scikit-learn, which may
 * move a boundary point. Where no such tie matters the index is 1 with the same noise; where ties in mutual
 * reachability abound (unit vectors in 64 dimensions) it is ≥ 0.99 (measured: 0.995, two boundary points) with the
 * same number of clusters. Membership probabilities (`probabilities_`: the cluster's direct-child death, min(λ, death),
 * 1 for a point that never left) are compared point by point to 1e-6 (scikit-learn's distances round differently);
 * where rounding or a tie reshapes the condensed tree below a cluster, that cluster's strengths differ, so each case
 * states the share that agrees (measured: 1 for the 8-d blobs and the moons, 0.997 for unit vectors, 0.854 for 2-d blobs).
 * Needs python3 with scikit-learn (`pip install scikit-learn`).
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
fitted = HDBSCAN(**params, copy=True).fit(X)
json.dump({"X": X.tolist(), "labels": fitted.labels_.tolist(), "probabilities": fitted.probabilities_.tolist()}, sys.stdout)
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
  // 0.854: one cluster's condensed tree splits differently below it (same members), so its strengths differ.
  { kind: 'blobs', n: 300, dim: 2, seed: 7, minClusterSize: 10, minSamples: 5, exact: true, sameStrength: 0.85 },
  { kind: 'blobs', n: 1000, dim: 8, seed: 3, minClusterSize: 15, minSamples: null, exact: true, sameStrength: 1 },
  { kind: 'moons', n: 400, dim: 2, seed: 11, minClusterSize: 8, minSamples: 4, exact: true, sameStrength: 1 },
  // Many equal mutual-reachability distances (core distances dominate in 64 dimensions): ties may break otherwise.
  { kind: 'unit', n: 600, dim: 64, seed: 5, minClusterSize: 5, minSamples: null, exact: false, sameStrength: 0.99 },
];

describe('hdbscan matches scikit-learn', () => {
  for (const spec of CASES) {
    it(`${spec.kind} ${spec.n} × ${spec.dim}, min_cluster_size ${spec.minClusterSize}, min_samples ${spec.minSamples ?? 'default'}`, { timeout: 60_000 }, () => {
      const { X, labels: expected, probabilities: expectedProbabilities } = python<{ X: number[][]; labels: number[]; probabilities: number[] }>(MAKE, spec);
      const { labels, probabilities } = hdbscan(X, { minClusterSize: spec.minClusterSize, ...(spec.minSamples !== null ? { minSamples: spec.minSamples } : {}) });
      const clusters = (l: number[]) => new Set(l.filter((x) => x >= 0)).size;
      expect(clusters(expected)).toBeGreaterThanOrEqual(2);
      expect(clusters(labels)).toBe(clusters(expected));
      const ari = python<number>(ARI, [expected, labels]);
      if (spec.exact) {
        expect(ari).toBe(1);
        expect(labels.filter((x) => x < 0).length).toBe(expected.filter((x) => x < 0).length);
      } else expect(ari).toBeGreaterThanOrEqual(0.99);
      // Membership strengths, point by point (to 1e-6: scikit-learn's distances round differently). Where rounding or a
      // tie reshapes the condensed tree under a cluster (same labels, another split below), that cluster's strengths
      // differ; the share of points that agree is at least spec.sameStrength (measured per case).
      const agree = probabilities.filter((p, i) => Math.abs(p - expectedProbabilities[i]!) < 1e-6).length / probabilities.length;
      expect(agree).toBeGreaterThanOrEqual(spec.sameStrength);
      expect(probabilities.every((p, i) => (labels[i]! < 0 ? p === 0 : p > 0 && p <= 1))).toBe(true);
    });
  }

  it('refuses bad input, naming the field', () => {
    expect(() => hdbscan([[0, 0], [1]], { minClusterSize: 2 })).toThrow(/Invalid points/);
    expect(() => hdbscan([[0, 0]], { minClusterSize: 1 })).toThrow(/Invalid clustering input/);
    expect(hdbscan([[0, 0]], { minClusterSize: 2 }).labels).toEqual([-1]);
  });
});
