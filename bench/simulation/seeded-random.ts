/**
 * A seeded pseudo-random source for the experiment simulations: sfc32 (32-bit small fast counter, passes PractRand to
 * terabytes) seeded through splitmix32, with the distributions the user model draws from. Same seed, same numbers, on
 * every machine: every figure `npm run sim:experiments` prints can be reproduced.
 *
 * `fork(label)` derives an independent stream from a label, so each scenario and each replication has its own stream
 * and adding a draw in one never shifts another.
 *
 * @example
 * const random = new SeededRandom(20261204);
 * const p = random.beta(0.5, 4);            // a user's propensity
 * const turns = 1 + random.poisson(3);      // their turns in the period
 * const rep = random.fork('replication-7'); // an independent stream
 */
export class SeededRandom {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  /** The second normal of the last Box–Muller pair. */
  private spareNormal: number | undefined;
  readonly seed: number;

  constructor(seed: number) {
    this.seed = seed >>> 0;
    let state = this.seed;
    const splitmix = (): number => {
      state = (state + 0x9e3779b9) >>> 0;
      let z = state;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = splitmix();
    this.b = splitmix();
    this.c = splitmix();
    this.d = splitmix();
    // sfc32's first outputs are correlated with the seed: discard a few.
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  /** An independent stream named by `label` (FNV-1a of the label mixed with this stream's seed). */
  fork(label: string): SeededRandom {
    let h = 0x811c9dc5 ^ this.seed;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
    return new SeededRandom(h);
  }

  nextUint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform on [0, 1) with 32 bits of resolution. */
  uniform(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform on (0, 1): safe under a logarithm. */
  private openUniform(): number {
    return (this.nextUint32() + 0.5) / 4294967296;
  }

  bernoulli(p: number): boolean {
    return this.uniform() < p;
  }

  /** Standard normal (Box–Muller, both values used). */
  normal(): number {
    if (this.spareNormal !== undefined) {
      const spare = this.spareNormal;
      this.spareNormal = undefined;
      return spare;
    }
    const r = Math.sqrt(-2 * Math.log(this.openUniform()));
    const theta = 2 * Math.PI * this.uniform();
    this.spareNormal = r * Math.sin(theta);
    return r * Math.cos(theta);
  }

  /** Gamma(shape, 1) by Marsaglia and Tsang; shape < 1 through the U^(1/shape) boost. */
  gamma(shape: number): number {
    if (shape < 1) return this.gamma(shape + 1) * Math.pow(this.openUniform(), 1 / shape);
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      let x: number;
      let v: number;
      do {
        x = this.normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const u = this.openUniform();
      if (u < 1 - 0.0331 * x * x * x * x) return d * v;
      if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
    }
  }

  beta(a: number, b: number): number {
    const x = this.gamma(a);
    return x / (x + this.gamma(b));
  }

  /** Poisson(lambda): Knuth's product method below 30; above, the sum of two halves (exact, a little slower). */
  poisson(lambda: number): number {
    if (lambda <= 0) return 0;
    if (lambda >= 30) {
      const half = lambda / 2;
      return this.poisson(half) + this.poisson(half);
    }
    const limit = Math.exp(-lambda);
    let k = 0;
    let product = this.uniform();
    while (product > limit) {
      k++;
      product *= this.uniform();
    }
    return k;
  }

  /** Binomial(n, p) by counting Bernoulli draws: exact, linear in n (the simulations keep n per call modest). */
  binomial(n: number, p: number): number {
    let k = 0;
    for (let i = 0; i < n; i++) if (this.uniform() < p) k++;
    return k;
  }
}
