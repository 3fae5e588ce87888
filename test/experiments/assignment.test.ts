/**
 * Assignment: GrowthBook's v2 hash checked against an independent Python implementation (FNV-1a by multiplication,
 * over UTF-16 code units) and the published FNV-1a vectors; the whole assignment rule re-implemented in Python from
 * its documentation and compared unit by unit; stickiness across ramp steps and arm stops; balance over 100k units
 * (chi-squared p-value from scipy); holdout and ramp shares; and the time one `assignUnit` takes (logged, not asserted).
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { armAt, assignUnit, HASH_SEEDS } from '../../lib/experiments/assignment/assign-unit.ts';
import { fnv1a32, growthBookHash } from '../../lib/experiments/assignment/growthbook-hash.ts';
import { ExperimentInput, type ExperimentInput as ExperimentInputShape, type ExperimentRecord } from '../../lib/experiments/schemas.ts';

function experiment(input: Partial<ExperimentInputShape>, state: Partial<ExperimentRecord> = {}): ExperimentRecord {
  const definition = ExperimentInput.parse({
    id: 'exp-assign',
    name: 'assignment',
    arms: [
      { id: 'control', checkpoint: 'ckpt-a', control: true },
      { id: 'b', checkpoint: 'ckpt-b', config: { temperature: 0.2 } },
    ],
    metrics: { primary: 'accepted' },
    plannedUnitsPerArm: 1000,
    ...input,
  });
  return {
    definition,
    status: 'running',
    plannedUnitsPerArm: 1000,
    rampStep: 0,
    stoppedArms: [],
    origin: { kind: 'person', by: 'test' },
    createdAt: '2026-12-01T00:00:00.000Z',
    revision: 1,
    ...state,
  };
}

/** Runs a Python program with a JSON input on stdin; its stdout parsed as JSON. */
function python(program: string, input: unknown): any {
  return JSON.parse(execFileSync('python3', ['-c', program], { input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
}

const PY_HASH = `
import json, sys
def fnv(s):
    h = 0x811C9DC5
    data = s.encode('utf-16-le')
    for i in range(0, len(data), 2):
        h ^= data[i] | (data[i + 1] << 8)
        h = (h * 16777619) % 2**32
    return h
def gb(seed, value):
    return (fnv(str(fnv(seed + value))) % 10000) / 10000
`;

const units = (n: number, prefix = 'user-') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('GrowthBook v2 hash', () => {
  it('matches the published FNV-1a vectors and an independent Python implementation', () => {
    // FNV-1a 32 test vectors of the FNV reference (draft-eastlake-fnv): "", "a", "foobar".
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);

    const pairs: Array<[string, string]> = [];
    for (const seed of ['', 'exp-1', 'exp-1/holdout', 'exp-1/ramp', 'seed with spaces', 'é-ß-漢字']) for (const value of ['', 'a', 'user-1', 'user-42', 'ws:acme', '😀', 'x'.repeat(300)]) pairs.push([seed, value]);
    const expected = python(`${PY_HASH}\npairs = json.load(sys.stdin)\nprint(json.dumps([gb(s, v) for s, v in pairs]))`, pairs) as number[];
    expect(pairs.map(([seed, value]) => growthBookHash(seed, value))).toEqual(expected);
  });
});

describe('assignUnit', () => {
  it('gives what the documented rule gives, re-implemented in Python, unit by unit', () => {
    const e = experiment(
      {
        holdout: 0.1,
        ramp: [{ percent: 20, minHours: 1 }, { percent: 60, minHours: 1 }, { percent: 100, minHours: 0 }],
        arms: [
          { id: 'control', checkpoint: 'ckpt-a', control: true, weight: 2 },
          { id: 'b', checkpoint: 'ckpt-b', weight: 1 },
          { id: 'c', checkpoint: 'ckpt-c', weight: 1 },
        ],
        seed: 'team-seed',
      },
      { rampStep: 1, stoppedArms: [{ arm: 'c', reason: 'person', at: '2026-12-02T00:00:00.000Z', detail: 'loops' }] },
    );
    const ids = units(5000);
    const program = `${PY_HASH}
inp = json.load(sys.stdin)
seed, holdout, percent = inp['seed'], inp['holdout'], inp['percent']
arms, stopped = inp['arms'], set(inp['stopped'])
total = sum(a['weight'] for a in arms)
out = []
for u in inp['units']:
    if holdout > 0 and gb(seed + '${HASH_SEEDS.holdout}', u) < holdout:
        out.append(['control', 'holdout']); continue
    if percent < 100 and gb(seed + '${HASH_SEEDS.ramp}', u) >= percent / 100:
        out.append(['control', 'not-ramped']); continue
    n, upper, arm = gb(seed, u), 0.0, arms[-1]['id']
    for a in arms:
        upper += a['weight'] / total
        if n < upper:
            arm = a['id']; break
    out.append(['control', 'arm-stopped'] if arm in stopped else [arm, 'assigned'])
print(json.dumps(out))`;
    const expected = python(program, { seed: 'team-seed', holdout: 0.1, percent: 60, arms: e.definition.arms, stopped: ['c'], units: ids }) as Array<[string, string]>;
    const got = ids.map((u) => assignUnit(e, u));
    expect(got.map((a) => [a.arm, a.reason])).toEqual(expected);
    const reasons = new Set(expected.map(([, r]) => r));
    expect([...reasons].sort()).toEqual(['arm-stopped', 'assigned', 'holdout', 'not-ramped']);
    for (const a of got) {
      expect(a.logExposure).toBe(a.reason === 'assigned');
      const arm = e.definition.arms.find((x) => x.id === a.arm)!;
      expect([a.checkpoint, a.config]).toEqual([arm.checkpoint, arm.config]);
    }
  });

  it('is sticky: widening the ramp only adds units, and stopping an arm moves only its own units (to the control)', () => {
    const ramp = [{ percent: 10, minHours: 1 }, { percent: 50, minHours: 1 }, { percent: 100, minHours: 0 }];
    const arms = [
      { id: 'control', checkpoint: 'ckpt-a', control: true },
      { id: 'b', checkpoint: 'ckpt-b' },
      { id: 'c', checkpoint: 'ckpt-c' },
    ];
    const steps = [0, 1, 2].map((rampStep) => experiment({ ramp, arms }, { rampStep }));
    const ids = units(20_000);
    const byStep = steps.map((e) => ids.map((u) => assignUnit(e, u)));
    const inAt = byStep.map((s) => s.filter((a) => a.reason === 'assigned').length);
    expect(inAt[0]! < inAt[1]! && inAt[1]! < inAt[2]!).toBe(true);
    expect(inAt[2]).toBe(ids.length);
    for (let i = 0; i < ids.length; i++) {
      for (let step = 0; step < 2; step++) {
        const before = byStep[step]![i]!;
        const after = byStep[step + 1]![i]!;
        if (before.reason === 'assigned') expect(after).toEqual(before); // in stays in, in the same arm
      }
    }

    const stopped = experiment({ ramp, arms }, { rampStep: 2, stoppedArms: [{ arm: 'b', reason: 'guardrail', at: '2026-12-02T00:00:00.000Z', detail: 'latency' }] });
    let moved = 0;
    ids.forEach((u, i) => {
      const before = byStep[2]![i]!;
      const after = assignUnit(stopped, u);
      if (before.arm === 'b') {
        expect([after.arm, after.reason, after.logExposure]).toEqual(['control', 'arm-stopped', false]);
        moved++;
      } else {
        expect(after).toEqual(before);
      }
    });
    expect(moved).toBeGreaterThan(ids.length / 4);

    // Not running: everyone gets the control and nothing is logged.
    for (const status of ['draft', 'stopped', 'decided'] as const) {
      const a = assignUnit(experiment({ arms }, { status }), 'user-1');
      expect([a.arm, a.reason, a.logExposure]).toEqual(['control', 'not-ramped', false]);
    }
  });

  it('splits 100k units by weight (chi-squared p > 0.001, scipy), independently of the ramp and the holdout', () => {
    const arms = [
      { id: 'control', checkpoint: 'ckpt-a', control: true, weight: 1 },
      { id: 'b', checkpoint: 'ckpt-b', weight: 1 },
      { id: 'c', checkpoint: 'ckpt-c', weight: 2 },
    ];
    const ids = units(100_000, 'u');
    const full = experiment({ arms });
    const counts = (list: string[], e: ExperimentRecord) => {
      const c: Record<string, number> = { control: 0, b: 0, c: 0 };
      for (const u of list) {
        const a = assignUnit(e, u);
        if (a.reason === 'assigned') c[a.arm]!++;
      }
      return c;
    };
    const shares = { control: 0.25, b: 0.25, c: 0.5 };
    const chiSquared = (c: Record<string, number>) => {
      const n = Object.values(c).reduce((x, y) => x + y, 0);
      return Object.entries(shares).reduce((sum, [arm, share]) => sum + (c[arm]! - n * share) ** 2 / (n * share), 0);
    };
    const all = counts(ids, full);
    // Among the 20% ramped in and outside a 30% holdout, the arms keep their shares: the hashes are independent.
    const narrowed = experiment({ arms, holdout: 0.3, ramp: [{ percent: 20, minHours: 0 }] });
    const some = counts(ids, narrowed);
    const stats = [chiSquared(all), chiSquared(some)];
    const pValues = python('import json, sys\nfrom scipy.stats import chi2\nprint(json.dumps([float(chi2.sf(x, 2)) for x in json.load(sys.stdin)]))', stats) as number[];
    console.log(`assignment balance: all ${JSON.stringify(all)} chi2 ${stats[0]!.toFixed(3)} p ${pValues[0]!.toFixed(4)}; ramped ${JSON.stringify(some)} chi2 ${stats[1]!.toFixed(3)} p ${pValues[1]!.toFixed(4)}`);
    expect(pValues[0]).toBeGreaterThan(0.001);
    expect(pValues[1]).toBeGreaterThan(0.001);

    // Holdout and ramp shares: within 4.5 binomial standard deviations of 30% and 70% × 20%.
    const narrowedAll = ids.map((u) => assignUnit(narrowed, u).reason);
    const share = (r: string) => narrowedAll.filter((x) => x === r).length / ids.length;
    const within = (observed: number, p: number) => expect(Math.abs(observed - p)).toBeLessThan(4.5 * Math.sqrt((p * (1 - p)) / ids.length));
    within(share('holdout'), 0.3);
    within(share('assigned'), 0.7 * 0.2);
    within(share('not-ramped'), 0.7 * 0.8);
  });

  it('cuts arm ranges over all arms in definition order', () => {
    const arms = experiment({
      arms: [
        { id: 'control', checkpoint: 'a', control: true, weight: 1 },
        { id: 'b', checkpoint: 'b', weight: 3 },
      ],
    }).definition.arms;
    expect([0, 0.2499, 0.25, 0.9999].map((n) => armAt(arms, n).id)).toEqual(['control', 'control', 'b', 'b']);
  });

  it('answers in well under a millisecond (p50/p99 logged)', () => {
    const e = experiment({ holdout: 0.05, ramp: [{ percent: 50, minHours: 0 }] });
    const n = 50_000;
    const times = new Float64Array(n);
    let sink = 0;
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      sink += assignUnit(e, `user-${i}`).arm.length;
      times[i] = Number(process.hrtime.bigint() - t0) / 1000;
    }
    times.sort();
    const p50 = times[Math.floor(n * 0.5)]!;
    const p99 = times[Math.floor(n * 0.99)]!;
    console.log(`assignUnit latency over ${n} units: p50 ${p50.toFixed(2)} µs, p99 ${p99.toFixed(2)} µs`);
    expect(sink).toBeGreaterThan(0);
  });
});
