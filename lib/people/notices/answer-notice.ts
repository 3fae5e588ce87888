/**
 * Answering a decision notice: the action's operation runs exactly as its own route would (`performDecision`), then
 * the notice is resolved with who answered and what came of it. A notice already resolved answers `Flywheel.Conflict`
 * (the decision was taken), an action the notice does not offer `Flywheel.NotFound`.
 */
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { getNotice, publicNotice, updateNotice } from './notice-store.ts';
import type { DecisionOperation, NoticeRecord } from './schemas.ts';

/** What runs a decision's operation (`performDecision` of `lib/people/decisions/perform-decision.ts`). */
export type PerformDecision = (ports: Ports, operation: DecisionOperation, by: string) => Promise<{ outcome: string }>;

/**
 * @example
 * const { notice, outcome } = await answerNotice(ports, noticeId, 'retire', 'key:k1', performDecision);
 */
export async function answerNotice(
  ports: Ports,
  noticeId: string,
  actionId: string,
  by: string,
  perform: PerformDecision,
): Promise<{ notice: NoticeRecord; outcome: string }> {
  const notice = await getNotice(ports.records, noticeId);
  if (notice.status === 'resolved') {
    throw new ConflictError(`Notice ${noticeId} was already answered by ${notice.resolution?.by ?? 'someone'}: ${notice.resolution?.outcome ?? ''}`);
  }
  const action = notice.actions?.find((a) => a.id === actionId);
  if (!action) throw new NotFoundError(`Notice ${noticeId} offers no action ${actionId} (actions: ${(notice.actions ?? []).map((a) => a.id).join(', ') || 'none'})`);
  const { outcome } = await perform(ports, action.operation, by);
  // The operation may have resolved the notice itself (a decided experiment resolves the notice that asked): the
  // answer given here is what the notice records either way.
  const at = ports.now().toISOString();
  const resolved = await updateNotice(ports.records, noticeId, (n) => ({ ...n, status: 'resolved', resolution: { actionId, by, at, outcome: outcome.slice(0, 1000) } }));
  return { notice: publicNotice(resolved), outcome };
}
