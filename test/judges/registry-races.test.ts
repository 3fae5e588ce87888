/**
 * The registry under concurrent status changes, over the local drivers with each record read and write delayed by a
 * random few event-loop turns so the use cases interleave differently every round: a retirement racing a promotion
 * never leaves the retired version promoted (nor its record anything but retired), and of concurrent demotions of
 * the promoted version exactly one reports a change and one `judge.demoted` is published (one drift alert).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { JUDGE_DEMOTED } from '../../lib/judges/events.ts';
import { saveCalibrationReport } from '../../lib/judges/registry/calibrations.ts';
import { demoteJudge, promoteJudge, retireJudge } from '../../lib/judges/registry/promote-judge.ts';
import { getJudge, resolveJudge } from '../../lib/judges/registry/read-judges.ts';
import { registerJudge } from '../../lib/judges/registry/register-judge.ts';
import { JudgePromotionConflictError, JudgeRetiredError } from '../../lib/judges/registry/registry-errors.ts';
import type { RecordsPort } from '../../lib/ports/records.ts';
import { definition, report, tempRegistryPorts } from './registry-fixture.ts';

let env: ReturnType<typeof tempRegistryPorts> | undefined;
afterEach(() => {
  env?.cleanup();
  env = undefined;
});

/** Deterministic pseudo-random turns (mulberry32), so a failing round can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The records port with every call delayed by 0–3 event-loop turns. */
function jittered(records: RecordsPort, seed: number): RecordsPort {
  const next = random(seed);
  const turns = async () => {
    for (let n = Math.floor(next() * 4); n > 0; n--) await new Promise<void>((resolve) => setImmediate(resolve));
  };
  return {
    put: async (item, options) => (await turns(), records.put(item, options)),
    putMany: async (items) => (await turns(), records.putMany(items)),
    get: async (pk, sk) => (await turns(), records.get(pk, sk)),
    query: async (input) => (await turns(), records.query(input)),
    delete: async (pk, sk) => (await turns(), records.delete(pk, sk)),
  };
}

const ROUNDS = 60;

describe('concurrent status changes', () => {
  it('a retirement racing a promotion never leaves the retired version promoted', async () => {
    env = tempRegistryPorts();
    const ports = env.ports;
    const { ref: incumbent } = await registerJudge(ports, definition({ prompt: 'the incumbent' }));
    await saveCalibrationReport(ports, report(incumbent, { estimate: 0.7, low: 0.61 }));
    await promoteJudge(ports, incumbent, { by: 'ana' });
    const outcomes = { promoteWon: 0, promoteRefused: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const { ref } = await registerJudge(ports, definition({ prompt: `candidate ${round}` }));
      await saveCalibrationReport(ports, report(ref, { estimate: 0.9, low: 0.8 }));
      const view = { ...ports, records: jittered(ports.records, round) };
      const [promoted, retired] = await Promise.allSettled([promoteJudge(view, ref, { by: 'ana' }), retireJudge(view, ref, { reason: `round ${round}`, by: 'bo' })]);
      expect(retired.status, `round ${round}`).toBe('fulfilled');
      if (promoted.status === 'rejected') {
        expect([JudgeRetiredError, JudgePromotionConflictError].some((c) => promoted.reason instanceof c), `round ${round}: ${String(promoted.reason)}`).toBe(true);
        outcomes.promoteRefused++;
      } else {
        outcomes.promoteWon++;
      }
      const judge = await getJudge(ports, 'scope-judge');
      expect(judge.promoted, `round ${round}`).not.toBe(ref.version);
      expect((await resolveJudge(ports, ref)).status, `round ${round}`).toBe('retired');
      expect(judge.versions.filter((v) => v.status === 'promoted').length, `round ${round}`).toBeLessThanOrEqual(1);
      // Put the incumbent back for the next round when the candidate displaced it before being retired.
      if (judge.promoted !== incumbent.version) await promoteJudge(ports, incumbent, { by: 'ana', force: true, reason: 'reset for the next round' });
    }
    expect(outcomes.promoteWon + outcomes.promoteRefused).toBe(ROUNDS);
  });

  it('of concurrent demotions of the promoted version one changes it and one judge.demoted is published', async () => {
    env = tempRegistryPorts();
    const ports = env.ports;
    const { ref } = await registerJudge(ports, definition());
    await saveCalibrationReport(ports, report(ref, { estimate: 0.9, low: 0.8 }));
    for (let round = 0; round < 20; round++) {
      await promoteJudge(ports, ref, { by: 'ana' });
      const before = ports.events.recent({ type: JUDGE_DEMOTED, limit: 1000 }).length;
      const results = await Promise.all(
        [0, 1, 2, 3].map((i) => demoteJudge({ ...ports, records: jittered(ports.records, round * 10 + i) }, ref, `drift ${round}/${i}`, { by: 'drift-watch' })),
      );
      expect(results.filter((r) => r.changed), `round ${round}`).toHaveLength(1);
      expect(ports.events.recent({ type: JUDGE_DEMOTED, limit: 1000 }).length - before, `round ${round}`).toBe(1);
      expect((await resolveJudge(ports, ref)).status).toBe('demoted');
      expect((await getJudge(ports, 'scope-judge')).promoted).toBeUndefined();
    }
  });
});
