import { ConflictError } from '../errors.ts';
import { resolveOpenNotice } from '../people/notices/notice-store.ts';
import { updateSuite } from './update-suite.ts';
import type { Ports } from '../ports/ports.ts';
import { getSuite } from './get-suite.ts';
import { parseInput } from '../shared/parse-input.ts';
import { RetireSuiteInput, type Suite } from './schemas.ts';

/** Published when a suite is retired (EventBridge detail-type), with a stable id per suite version. */
export const SUITE_RETIRED = 'suite.retired';

/** The dedup key of the notice that asks to retire a saturated suite version (raised by the saturation check). */
export function saturationNoticeKey(id: string, version: number): string {
  return `suite.saturated:${id}:v${version}`;
}

/**
 * A newer version of the suite was registered while it was being retired (409): look at it and retire that one.
 * Named `ErrorNames.conflict`, as every conflict is, so the HTTP status map and a state machine treat it as one.
 */
export class SuiteVersionConflictError extends ConflictError {
  constructor(id: string, version: number) {
    super(`Suite ${id} moved past version ${version} while it was being retired; read it again and retire the new version if you mean to`);
  }
}

/**
 * Retires a suite: status `retired`, `retiredAt` now, the reason (and who, when given). Sweeps then leave it out of
 * their default selection and refuse it when named (`lib/sweeps/resolve-sweep-selection.ts`); its results and
 * best-score series stay readable. An active or a saturated suite may be retired (the saturation alert proposes it).
 *
 * Idempotent: retiring a retired suite changes nothing (`changed: false`, the first time and reason kept) and
 * publishes `suite.retired` again under the same event id, so an event lost to a crash after the write is not lost
 * for good. Registering a higher version of the suite starts a new, active life (`registerSuite`).
 *
 * @example
 * const { suite } = await retireSuite(ports, 'forge-py', { reason: 'saturated: ck-7 at 93% strict', by: 'evals' });
 */
export async function retireSuite(ports: Pick<Ports, 'records' | 'events' | 'now'>, id: string, input: unknown): Promise<{ suite: Suite; changed: boolean }> {
  const r = parseInput(RetireSuiteInput, input, 'retirement');
  const read = await getSuite(ports.records, id);
  let suite = read;
  let changed = false;
  if (read.status !== 'retired') {
    const retired = await updateSuite(ports.records, id, (current) => {
      if (current.version !== read.version) throw new SuiteVersionConflictError(id, read.version);
      if (current.status === 'retired') return undefined; // retired by someone else meanwhile: theirs stands
      return { ...current, status: 'retired', retiredAt: ports.now().toISOString(), retiredReason: r.reason, ...(r.by ? { retiredBy: r.by } : {}) };
    });
    changed = retired !== undefined;
    suite = retired ?? (await getSuite(ports.records, id));
  }
  await ports.events.publish([
    {
      type: SUITE_RETIRED,
      id: `${SUITE_RETIRED}:${id}:v${suite.version}`,
      detail: { suite: id, version: suite.version, retiredAt: suite.retiredAt, reason: suite.retiredReason, ...(suite.retiredBy ? { by: suite.retiredBy } : {}) },
    },
  ]);
  // However it was retired (its route, the CLI, a button), the notice asking for it has its answer.
  await resolveOpenNotice(ports.records, saturationNoticeKey(id, suite.version), { by: suite.retiredBy ?? 'registry', outcome: `Retired: ${suite.retiredReason ?? ''}` }, ports.now());
  return { suite, changed };
}
