/**
 * GrowthBook's documented bucketing hash, version 2 (`hash(seed, value, 2)` of its SDKs' `util.ts`, MIT), so a team
 * can recompute any assignment with GrowthBook's SDKs or a few lines of its own:
 *
 *   n = (fnv1a32(String(fnv1a32(seed + value))) % 10000) / 10000      // in [0, 1), steps of 0.0001
 *
 * FNV-1a over UTF-16 code units (`charCodeAt`), as GrowthBook does; the inner hash is hashed again as its decimal
 * string, which removes the bias of version 1 for similar ids.
 *
 * @example
 * growthBookHash('exp-1', 'user-42'); // a number in [0, 1), the same on every machine and in every SDK
 */

/**
 * 32-bit FNV-1a of a string's UTF-16 code units, unsigned.
 *
 * @example
 * fnv1a32('a'); // 0xe40c292c
 */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    // h * 16777619 mod 2^32, as GrowthBook writes it: shifts and adds stay exact in 32-bit integers.
    h += (h << 1) + (h << 4) + (h << 7) + (h << 8) + (h << 24);
  }
  return h >>> 0;
}

/**
 * GrowthBook's `hash(seed, value, 2)`: the unit's position in [0, 1) for this seed.
 *
 * @example
 * growthBookHash('exp-1', 'user-42') < 0.5; // in the first half of the units for seed exp-1
 */
export function growthBookHash(seed: string, value: string): number {
  return (fnv1a32(String(fnv1a32(seed + value))) % 10000) / 10000;
}
