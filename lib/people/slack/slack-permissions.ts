/**
 * Who may do what from Slack. Reading (`compare`, `status`, `help`) is open to anyone in the workspace the app is
 * installed in (Slack signed the request); acting (starting a sweep, a training run or an experiment, answering a
 * decision's buttons) takes a Slack user id listed as an admin: `FLYWHEEL_SLACK_ADMIN_USERS` (comma-separated), which
 * the stacks set from the stage's `notifications.slackApp.adminUserIds`. None listed: nobody acts from Slack.
 *
 * @example
 * const admins = slackAdminsFromEnv(); // Set { 'U0123ABCD' }
 * if (!mayAct(admins, 'U0123ABCD')) …
 */

export const SLACK_ADMIN_USERS_ENV = 'FLYWHEEL_SLACK_ADMIN_USERS';

/** The admin user ids from `FLYWHEEL_SLACK_ADMIN_USERS`. */
export function slackAdminsFromEnv(env: NodeJS.ProcessEnv = process.env): ReadonlySet<string> {
  return new Set((env[SLACK_ADMIN_USERS_ENV] ?? '').split(',').map((s) => s.trim()).filter((s) => s !== ''));
}

/** Whether this Slack user may act (start things, answer decisions). */
export function mayAct(admins: ReadonlySet<string>, userId: string): boolean {
  return admins.has(userId);
}

/** Who decided, as records keep it: `slack:U0123ABCD`. */
export function slackActor(userId: string): string {
  return `slack:${userId}`;
}

/** A recorded actor as Slack shows it: `slack:U0123ABCD` → `<@U0123ABCD>` (a mention); anything else as it is. */
export function mentionOf(actor: string): string {
  const m = /^slack:([A-Z0-9]+)$/.exec(actor);
  return m ? `<@${m[1]}>` : actor;
}
