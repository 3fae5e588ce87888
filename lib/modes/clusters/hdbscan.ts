/**
 * HDBSCAN (Campello, Moulavi, Sander 2013), written to follow scikit-learn's `sklearn.cluster.HDBSCAN` step by step
 * (brute-force distances, Prim's minimum spanning tree over mutual reachability, single-linkage tree, condensed tree,
 * excess-of-mass selection, `allow_single_cluster=False`, `cluster_selection_epsilon=0`), so the same input gives
 * the same clusters up to relabelling: `test/modes/clusters-hdbscan-sklearn.test.ts` compares them with a real
 * scikit-learn process.
 *
 * Why hand-written: the npm candidates were measured and none is good enough (README, library table): `hdbscan-ts`
 * 1.0.17 gives an adjusted Rand index of about 0 against scikit-learn on plain Gaussian blobs and takes 8.6 s for
 * 1,000 × 8; `hdbscanjs` builds only a single-linkage tree over 2-D/geo points; `hdbscan` 0.0.1-alpha prints its
 * internals to the console; `density-clustering` has DBSCAN/OPTICS with a fixed radius, the model-dependent cut this
 * replaces.
 *
 * Memory: a dense n × n Float32 distance matrix (5,000 points: 100 MB); callers cap n (`HDBSCAN_MAX_POINTS`).
 */
import { ValidationError } from '../../errors.ts';

/** The most points one run accepts (a 10,000² Float32 matrix is 400 MB). */
export const HDBSCAN_MAX_POINTS = 10_000;

export interface HdbscanOptions {
  /** Smallest group that counts as a cluster (scikit-learn `min_cluster_size`). */
  minClusterSize: number;
  /** Neighbours (the point itself included) that make a point core (scikit-learn `min_samples`); default `minClusterSize`. */
  minSamples?: number;
}

export interface HdbscanResult {
  /** Cluster of each point, 0…k-1, or -1 for noise. Clusters are numbered as scikit-learn numbers them. */
  labels: number[];
  /** How strongly each point belongs to its cluster (scikit-learn `probabilities_`), 0 for noise. */
  probabilities: number[];
}

/** Euclidean distance matrix of row vectors (Float32, dense, symmetric). */
function distanceMatrix(points: readonly ArrayLike<number>[]): Float32Array {
  const n = points.length;
  const dim = n > 0 ? points[0]!.length : 0;
  const flat = new Float64Array(n * dim);
  const sq = new Float64Array(n);
  points.forEach((p, i) => {
    if (p.length !== dim) throw new ValidationError('Invalid points', [{ path: `points.${i}`, message: `has ${p.length} dimensions, the first has ${dim}` }]);
    let s = 0;
    for (let d = 0; d < dim; d++) {
      const x = Number(p[d]);
      if (!Number.isFinite(x)) throw new ValidationError('Invalid points', [{ path: `points.${i}.${d}`, message: 'must be a finite number' }]);
      flat[i * dim + d] = x;
      s += x * x;
    }
    sq[i] = s;
  });
  const out = new Float32Array(n * n);
  // Blocks of rows against each later row: a row read from memory serves the whole block (5,000 × 384: ~4× faster).
  const BLOCK = 32;
  for (let i0 = 0; i0 < n; i0 += BLOCK) {
    const i1 = Math.min(n, i0 + BLOCK);
    for (let j = i0 + 1; j < n; j++) {
      const oj = j * dim;
      for (let i = i0; i < i1 && i < j; i++) {
        const oi = i * dim;
        let dot = 0;
        let d = 0;
        for (; d + 3 < dim; d += 4) {
          dot += flat[oi + d]! * flat[oj + d]! + flat[oi + d + 1]! * flat[oj + d + 1]! + flat[oi + d + 2]! * flat[oj + d + 2]! + flat[oi + d + 3]! * flat[oj + d + 3]!;
        }
        for (; d < dim; d++) dot += flat[oi + d]! * flat[oj + d]!;
        const dist = Math.sqrt(Math.max(0, sq[i]! + sq[j]! - 2 * dot));
        out[i * n + j] = dist;
        out[j * n + i] = dist;
      }
    }
  }
  return out;
}

/** The k-th smallest value (0-based) of `a` (modified in place). */
function select(a: Float32Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k]!;
  }
  return a[k]!;
}

interface CondensedEdge {
  parent: number;
  child: number;
  lambda: number;
  size: number;
}

/**
 * Clusters row vectors by density.
 *
 * @example
 * const { labels } = hdbscan([[0, 0], [0, 0.1], [0.1, 0], [5, 5], [5, 5.1], [5.1, 5]], { minClusterSize: 3 });
 * // labels: [0, 0, 0, 1, 1, 1]
 * @throws ValidationError for too many points, ragged or non-finite vectors, or bad options.
 */
export function hdbscan(points: readonly ArrayLike<number>[], options: HdbscanOptions): HdbscanResult {
  const n = points.length;
  const minClusterSize = options.minClusterSize;
  const minSamples = options.minSamples ?? minClusterSize;
  const issues = [];
  if (!Number.isInteger(minClusterSize) || minClusterSize < 2) issues.push({ path: 'minClusterSize', message: 'must be an integer ≥ 2' });
  if (!Number.isInteger(minSamples) || minSamples < 1) issues.push({ path: 'minSamples', message: 'must be an integer ≥ 1' });
  if (n > HDBSCAN_MAX_POINTS) issues.push({ path: 'points', message: `at most ${HDBSCAN_MAX_POINTS} points` });
  if (issues.length > 0) throw new ValidationError('Invalid clustering input', issues);
  if (n < 2 || n < minClusterSize) return { labels: new Array<number>(n).fill(-1), probabilities: new Array<number>(n).fill(0) };

  const dist = distanceMatrix(points);
  // Core distance: distance to the min_samples-th neighbour, the point itself counted first (scikit-learn).
  const k = Math.min(minSamples, n) - 1;
  const core = new Float64Array(n);
  const scratch = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    scratch.set(dist.subarray(i * n, (i + 1) * n));
    core[i] = select(scratch, k);
  }

  // Prim's minimum spanning tree over mutual reachability max(core a, core b, d(a, b)).
  const inTree = new Uint8Array(n);
  const best = new Float64Array(n).fill(Infinity);
  const from = new Int32Array(n).fill(-1);
  const edges: { a: number; b: number; w: number }[] = [];
  let current = 0;
  inTree[0] = 1;
  for (let step = 1; step < n; step++) {
    const row = current * n;
    const cc = core[current]!;
    let next = -1;
    let nextW = Infinity;
    for (let j = 0; j < n; j++) {
      if (inTree[j]) continue;
      const mr = Math.max(cc, core[j]!, dist[row + j]!);
      if (mr < best[j]!) {
        best[j] = mr;
        from[j] = current;
      }
      if (best[j]! < nextW) {
        nextW = best[j]!;
        next = j;
      }
    }
    edges.push({ a: from[next]!, b: next, w: nextW });
    inTree[next] = 1;
    current = next;
  }
  edges.sort((x, y) => x.w - y.w);

  // Single-linkage tree: node n + i merges two components at edge i's distance.
  const parentOf = new Int32Array(2 * n - 1).fill(-1);
  const sizeOf = new Int32Array(2 * n - 1).fill(1);
  const find = (x: number): number => {
    let r = x;
    while (parentOf[r]! !== -1) r = parentOf[r]!;
    while (parentOf[x]! !== -1 && parentOf[x]! !== r) {
      const up = parentOf[x]!;
      parentOf[x] = r;
      x = up;
    }
    return r;
  };
  const left = new Int32Array(n - 1);
  const right = new Int32Array(n - 1);
  const height = new Float64Array(n - 1);
  edges.forEach((e, i) => {
    const ra = find(e.a);
    const rb = find(e.b);
    const node = n + i;
    left[i] = ra;
    right[i] = rb;
    height[i] = e.w;
    parentOf[ra] = node;
    parentOf[rb] = node;
    sizeOf[node] = sizeOf[ra]! + sizeOf[rb]!;
  });

  // Condensed tree (scikit-learn `_condense_tree`).
  const root = 2 * n - 2;
  const leavesOf = (node: number): number[] => {
    const out: number[] = [];
    const stack = [node];
    while (stack.length > 0) {
      const x = stack.pop()!;
      if (x < n) out.push(x);
      else stack.push(left[x - n]!, right[x - n]!);
    }
    return out;
  };
  const relabel = new Int32Array(2 * n - 1);
  relabel[root] = n;
  let nextLabel = n + 1;
  const condensed: CondensedEdge[] = [];
  const ignore = new Uint8Array(2 * n - 1);
  const bfs = [root];
  for (let qi = 0; qi < bfs.length; qi++) {
    const node = bfs[qi]!;
    if (node < n) continue;
    const l = left[node - n]!;
    const r = right[node - n]!;
    bfs.push(l, r);
    if (ignore[node]) continue;
    const d = height[node - n]!;
    const lambda = d > 0 ? 1 / d : Infinity;
    const ls = sizeOf[l]!;
    const rs = sizeOf[r]!;
    const label = relabel[node]!;
    if (ls >= minClusterSize && rs >= minClusterSize) {
      relabel[l] = nextLabel++;
      condensed.push({ parent: label, child: relabel[l]!, lambda, size: ls });
      relabel[r] = nextLabel++;
      condensed.push({ parent: label, child: relabel[r]!, lambda, size: rs });
    } else if (ls < minClusterSize && rs < minClusterSize) {
      for (const side of [l, r]) {
        for (const p of leavesOf(side)) condensed.push({ parent: label, child: p, lambda, size: 1 });
        markIgnored(side);
      }
    } else if (ls < minClusterSize) {
      relabel[r] = label;
      for (const p of leavesOf(l)) condensed.push({ parent: label, child: p, lambda, size: 1 });
      markIgnored(l);
    } else {
      relabel[l] = label;
      for (const p of leavesOf(r)) condensed.push({ parent: label, child: p, lambda, size: 1 });
      markIgnored(r);
    }
  }
  function markIgnored(node: number): void {
    const stack = [node];
    while (stack.length > 0) {
      const x = stack.pop()!;
      ignore[x] = 1;
      if (x >= n) stack.push(left[x - n]!, right[x - n]!);
    }
  }

  // Stability of each condensed cluster: Σ (λ of leaving − λ of birth) × size.
  const clusterCount = nextLabel - n;
  const birth = new Float64Array(clusterCount);
  for (const e of condensed) if (e.child >= n) birth[e.child - n] = e.lambda;
  const stability = new Float64Array(clusterCount);
  for (const e of condensed) {
    const lambda = Number.isFinite(e.lambda) ? e.lambda : Number.MAX_VALUE;
    stability[e.parent - n]! += (lambda - birth[e.parent - n]!) * e.size;
  }

  // Excess of mass: keep a cluster unless its children together are more stable; never the root.
  const childrenOf = new Map<number, number[]>();
  for (const e of condensed) if (e.child >= n) childrenOf.set(e.parent, [...(childrenOf.get(e.parent) ?? []), e.child]);
  const selected = new Set<number>();
  for (let c = nextLabel - 1; c > n; c--) {
    const kids = childrenOf.get(c) ?? [];
    const sub = kids.reduce((s, kid) => s + stability[kid - n]!, 0);
    if (kids.length > 0 && sub > stability[c - n]!) {
      stability[c - n] = sub;
    } else {
      selected.add(c);
      const stack = [...kids];
      while (stack.length > 0) {
        const x = stack.pop()!;
        selected.delete(x);
        stack.push(...(childrenOf.get(x) ?? []));
      }
    }
  }

  // Labels: each point belongs to the selected cluster above it, if any.
  const condensedParent = new Map<number, number>();
  for (const e of condensed) condensedParent.set(e.child, e.parent);
  const order = [...selected].sort((a, b) => a - b);
  const index = new Map(order.map((c, i) => [c, i]));
  const labels = new Array<number>(n).fill(-1);
  const leaveLambda = new Float64Array(n);
  for (const e of condensed) if (e.child < n) leaveLambda[e.child] = e.lambda;
  for (let p = 0; p < n; p++) {
    let c = condensedParent.get(p);
    while (c !== undefined && !selected.has(c)) c = condensedParent.get(c);
    if (c !== undefined) labels[p] = index.get(c)!;
  }
  // Membership strength as scikit-learn computes it (`max_lambdas`, `get_probabilities`): a selected cluster's death
  // is the largest λ among its direct children in the condensed tree (points and child clusters); a member's strength
  // is min(λ at which it left, death) / death, and 1 when it never left (infinite λ) or the death is 0.
  const death = new Float64Array(order.length);
  for (const e of condensed) {
    const i = index.get(e.parent);
    if (i !== undefined) death[i] = Math.max(death[i]!, e.lambda);
  }
  const probabilities = labels.map((l, p) => {
    if (l < 0) return 0;
    const m = death[l]!;
    const lambda = leaveLambda[p]!;
    if (m === 0 || !Number.isFinite(lambda)) return 1;
    return Math.min(lambda, m) / m;
  });
  return { labels, probabilities };
}
