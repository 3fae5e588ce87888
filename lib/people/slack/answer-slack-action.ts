/**
 * The worker's half of a button click on a notice (`action_id` `notice:<actionId>`, `value` the notice id, made by
 * `noticeBlocks`): the notice's action is answered as `POST /v1/notices/{id}/actions/{actionId}` answers it
 * (`answerNotice` → `performDecision`, then the notice resolved), and the Slack message is updated in place: its
 * buttons give way to "<outcome>, by <@U…> at <time>".
 *
 * A notice already answered (a second click, someone else first, the console) changes nothing: the thread is told
 * "already answered by …" and the message shows the answer. A refusal (the use case's 400/404/409, a user who may not
 * act) is answered in the message's thread; anything else throws, so the queue retries it.
 *
 * @example
 * await answerSlackAction(deps, { kind: 'interaction', channelId: 'C1', userId: 'U1', messageTs: '1.2', actionId: 'notice:ship', value: 'n-…', receivedAt });
 */
import { ConflictError } from '../../errors.ts';
import { performDecision } from '../decisions/perform-decision.ts';
import { answerNotice } from '../notices/answer-notice.ts';
import { NOTICE_ACTION_PREFIX, noticeBlocks } from '../notices/notice-blocks.ts';
import { getNotice } from '../notices/notice-store.ts';
import type { NoticeRecord } from '../notices/schemas.ts';
import { isAnswerable, type SlackWorkerDeps } from './run-slack-command.ts';
import { mayAct, mentionOf, slackActor } from './slack-permissions.ts';
import type { SlackInteractionWork } from './slack-work.ts';

/** The message of a resolved notice: the notice's own blocks, with its answer said Slack's way. */
export function answeredBlocks(notice: NoticeRecord, consoleUrl?: string): { text: string; blocks: unknown[] } {
  const { text, blocks } = noticeBlocks(notice, consoleUrl);
  const r = notice.resolution;
  if (!r) return { text, blocks };
  const when = r.at.slice(0, 16).replace('T', ' ');
  const answer = { type: 'section', text: { type: 'mrkdwn', text: `:white_check_mark: ${r.outcome}, by ${mentionOf(r.by)} at ${when} UTC`.slice(0, 3000) } };
  // noticeBlocks says who answered with the record's actor; here the same line names the Slack user.
  const kept = blocks.filter((b) => !(typeof b === 'object' && b !== null && JSON.stringify(b).includes(':white_check_mark:')));
  return { text: `${text}: ${r.outcome}`, blocks: [...kept, answer] };
}

/**
 * @example
 * await answerSlackAction(deps, work);
 */
export async function answerSlackAction(deps: SlackWorkerDeps, work: SlackInteractionWork): Promise<void> {
  const { ports, slack } = deps;
  if (!work.actionId.startsWith(NOTICE_ACTION_PREFIX)) return; // the console link button, or another app's
  const actionId = work.actionId.slice(NOTICE_ACTION_PREFIX.length);
  const noticeId = work.value;
  const thread = work.threadTs ?? work.messageTs;
  const inThread = (text: string) => slack.postMessage({ channel: work.channelId, text: text.slice(0, 3000), threadTs: thread });
  const showAnswered = async (notice: NoticeRecord) => {
    const { text, blocks } = answeredBlocks(notice, deps.consoleUrl);
    await slack.update({ channel: work.channelId, ts: work.messageTs, text, blocks });
  };
  if (!mayAct(deps.admins, work.userId)) {
    await inThread(`<@${work.userId}> only the stage's Slack admins may answer decisions (notifications.slackApp.adminUserIds).`);
    return;
  }
  try {
    const { notice } = await answerNotice(ports, noticeId, actionId, slackActor(work.userId), performDecision);
    await showAnswered(notice);
  } catch (error) {
    if (error instanceof ConflictError) {
      const current = await getNotice(ports.records, noticeId).catch(() => undefined);
      if (current?.status === 'resolved' && current.resolution) {
        await inThread(`Already answered by ${mentionOf(current.resolution.by)}: ${current.resolution.outcome}`);
        await showAnswered(current);
        return;
      }
    }
    if (!isAnswerable(error)) throw error;
    await inThread(`:warning: <@${work.userId}> could not answer: ${error.message}`);
  }
}
