import { describe, expect, it } from 'vitest';
import { TokenBucketThrottle } from '../../lib/local/token-bucket.ts';

describe('TokenBucketThrottle', () => {
  it('allows the burst, then refuses with a retry-after, then refills at the rate, per key', () => {
    let now = 0;
    const throttle = new TokenBucketThrottle(2, 3, () => now);
    expect([throttle.take('a'), throttle.take('a'), throttle.take('a')]).toEqual([0, 0, 0]);
    expect(throttle.take('a')).toBe(1);
    expect(throttle.take('b')).toBe(0); // another key has its own bucket
    now += 500; // 0.5 s at 2/s = one token
    expect(throttle.take('a')).toBe(0);
    expect(throttle.take('a')).toBe(1);
    now += 10_000;
    expect([throttle.take('a'), throttle.take('a'), throttle.take('a'), throttle.take('a')]).toEqual([0, 0, 0, 1]);
  });

  it('says how many whole seconds to wait when the rate is slow', () => {
    let now = 0;
    const throttle = new TokenBucketThrottle(0.25, 1, () => now);
    expect(throttle.take('k')).toBe(0);
    expect(throttle.take('k')).toBe(4);
    now += 4_000;
    expect(throttle.take('k')).toBe(0);
  });
});
