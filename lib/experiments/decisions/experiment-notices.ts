/**
 * How the experiments' use cases tell people: a `notify` port-like function (tests capture it; default `raiseNotice`,
 * `lib/people/notices/`: stored once under the notice's stable id, then the log, Slack and the bus), and the stable
 * ids that make a rerun's notice recognisable.
 */
import { noticeNotifier } from '../../people/notices/notice-notifier.ts';
import type { RaiseNoticePorts } from '../../people/notices/raise-notice.ts';
import { notifyOptionsFromEnv, notifyPeople, type Notice } from '../../people/notify.ts';

export type Notify = (notice: Notice) => Promise<unknown>;

/**
 * The given notifier, or the default: a raised notice over `ports` (the log and Slack alone without them).
 *
 * @example
 * await notifierOf(ports.notify, ports)({ id: 'experiment.decided:exp-1', severity: 'info', title: 'Shipped', text: '…' });
 */
export function notifierOf(notify: Notify | undefined, ports?: RaiseNoticePorts): Notify {
  if (notify) return notify;
  return ports ? noticeNotifier(ports, 'experiments') : (n: Notice) => notifyPeople(n, notifyOptionsFromEnv());
}

/** The event published when an experiment is decided (`experiment.decided:<id>`; detail: kind, arm, promoted, analysisId). */
export const EXPERIMENT_DECIDED = 'experiment.decided';
/** The event published when the schedule stops an arm (`experiment.arm-stopped:<id>:<arm>`). */
export const EXPERIMENT_ARM_STOPPED = 'experiment.arm-stopped';
/** The event published when an experiment stops (`experiment.stopped:<id>`). */
export const EXPERIMENT_STOPPED = 'experiment.stopped';
/** The event published when a ramp widens (`experiment.ramped:<id>:<step>`). */
export const EXPERIMENT_RAMPED = 'experiment.ramped';

export const pct = (x: number | null | undefined, digits = 1): string => (x === null || x === undefined ? 'n/a' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(digits)}%`);
