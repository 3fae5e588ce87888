/**
 * How the experiments' use cases tell people: a `notify` port-like function (tests capture it; default the log plus the
 * Slack webhook of `FLYWHEEL_SLACK_WEBHOOK_URL`), and the stable ids that make a rerun's notice recognisable.
 */
import { notifyOptionsFromEnv, notifyPeople, type Notice } from '../../people/notify.ts';

export type Notify = (notice: Notice) => Promise<unknown>;

/**
 * The given notifier, or the default (log + Slack webhook from the environment).
 *
 * @example
 * await notifierOf(ports.notify)({ id: 'experiment.decided:exp-1', severity: 'info', title: 'Shipped', text: '…' });
 */
export function notifierOf(notify: Notify | undefined): Notify {
  return notify ?? ((n: Notice) => notifyPeople(n, notifyOptionsFromEnv()));
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
