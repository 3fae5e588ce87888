import { z } from 'zod';
import type { EventLine, Trajectory } from './trajectory-schema.ts';

/**
 * The events a behavioural case adds to a trajectory (`event` lines; docs/trajectory.md), and readers for the judge:
 * - `user.turn`: a user said something (a scripted turn, or the simulated user): `detail.source` (`script` |
 *   `simulated-user`), `detail.delivered` (`message`: a user message after the turn, whose id is `userMessageId`;
 *   `tool-result`: the answer to `ask_user`, with the `question`), the trigger;
 * - `user.unanswered`: `ask_user` got no answer (no scripted turn, no simulated user);
 * - `submit.held`: a submission held by a user turn on `submit`;
 * - `tool.added`, `tool.removed`: the tool list changed after a turn (`detail.tool`, `detail.tools` now offered);
 * - `tool.unavailable`: the agent called a tool that had been removed;
 * - `service.call`: one call of a fake service's tool (`detail.service`, `tool`, `args`, `result`, `isError`);
 * - `service.state`: a service's state at the end of the attempt (`detail.service`, `detail.state`).
 *
 * @example
 * for (const call of serviceCalls(trajectory)) console.log(call.service, call.tool, call.args);
 * const chat = finalServiceStates(trajectory).chat;
 */
export const BEHAVIOUR_EVENT_KINDS = ['user.turn', 'user.unanswered', 'submit.held', 'tool.added', 'tool.removed', 'tool.unavailable', 'service.call', 'service.state'] as const;
export type BehaviourEventKind = (typeof BEHAVIOUR_EVENT_KINDS)[number];

export const ServiceCallDetailSchema = z.object({
  service: z.string(),
  tool: z.string(),
  args: z.unknown(),
  result: z.string(),
  isError: z.boolean(),
  /** The result's full length when `result` was cut. */
  resultChars: z.number().int().optional(),
});
export type ServiceCallDetail = z.infer<typeof ServiceCallDetailSchema>;

export const UserTurnDetailSchema = z.looseObject({
  source: z.enum(['script', 'simulated-user']),
  delivered: z.enum(['message', 'tool-result']),
  userMessageId: z.string().optional(),
  question: z.string().optional(),
});

export interface ServiceCall extends ServiceCallDetail {
  seq: number;
  at: string;
  messageId?: string;
  toolCallId?: string;
}

function events(trajectory: Pick<Trajectory, 'steps'>, kind: BehaviourEventKind): EventLine[] {
  return trajectory.steps.filter((s): s is EventLine => s.type === 'event' && s.kind === kind);
}

/** Every fake-service call of the attempt, in order (events whose detail does not parse are skipped). */
export function serviceCalls(trajectory: Pick<Trajectory, 'steps'>): ServiceCall[] {
  return events(trajectory, 'service.call').flatMap((e) => {
    const d = ServiceCallDetailSchema.safeParse(e.detail);
    if (!d.success) return [];
    return [{ ...d.data, seq: e.seq, at: e.at, ...(e.messageId ? { messageId: e.messageId } : {}), ...(e.span?.toolCallId ? { toolCallId: e.span.toolCallId } : {}) }];
  });
}

/** Each service's state at the end of the attempt, by service name. */
export function finalServiceStates(trajectory: Pick<Trajectory, 'steps'>): Record<string, unknown> {
  return Object.fromEntries(events(trajectory, 'service.state').map((e) => [String(e.detail['service']), e.detail['state']]));
}

/** What the user said during the attempt (besides the instruction), in order. */
export function userTurns(trajectory: Pick<Trajectory, 'steps'>): Array<{ seq: number; text: string; source: string; delivered: string }> {
  return events(trajectory, 'user.turn').map((e) => ({ seq: e.seq, text: e.message, source: String(e.detail['source']), delivered: String(e.detail['delivered']) }));
}

/**
 * The service calls as plain text (one line per call: `service.tool args → result`), the text a judge's
 * `service-calls` evidence quotes are checked against.
 */
export function serviceCallsText(trajectory: Pick<Trajectory, 'steps'>): string {
  return serviceCalls(trajectory)
    .map((c) => `${c.service}.${c.tool} ${JSON.stringify(c.args)} → ${c.isError ? 'error: ' : ''}${c.result}`)
    .join('\n');
}
