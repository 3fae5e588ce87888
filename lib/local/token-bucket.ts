/**
 * Per-key token bucket, the model behind API Gateway's usage-plan throttle: `burst` requests at once, refilled at
 * `rate` per second. Kept in memory: the local runtime is one process.
 *
 * @example
 * const throttle = new TokenBucketThrottle(100, 200);
 * const retryAfter = throttle.take(apiKey); // 0 = allowed, else seconds to wait
 */
export class TokenBucketThrottle {
  readonly rate: number;
  readonly burst: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #now: () => number;

  constructor(rate: number, burst: number, now: () => number = () => performance.now()) {
    this.rate = rate;
    this.burst = Math.max(1, burst);
    this.#now = now;
  }

  /** Takes one token for `key`; returns 0 when allowed, else the whole seconds until a token is free (≥ 1). */
  take(key: string): number {
    const now = this.#now();
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      bucket = { tokens: this.burst, at: now };
      this.#buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.rate);
      bucket.at = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.rate));
  }
}
