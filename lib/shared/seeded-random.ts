/**
 * mulberry32: a tiny seeded generator of uniform numbers in [0, 1), for draws that must be the same on every run and
 * machine (bootstrap intervals, generated archives, simulated outcomes in tests). Not for cryptography, and not for
 * long simulations (a 32-bit state: `bench/simulation/seeded-random.ts` has sfc32 with streams for those).
 *
 * @example
 * const random = mulberry32(7);
 * random(); // the same number on every run
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
