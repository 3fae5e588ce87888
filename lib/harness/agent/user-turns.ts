import { z } from 'zod';
import { ASK_USER_TOOL } from '../task/behaviour-schema.ts';
import type { AgentTool } from './agent-tools.ts';

/**
 * The user's side of a behavioural case as the agent meets it: the `ask_user` tool (offered when a task has user turns
 * or a simulated user; the agent loop answers it from a scripted turn on `ask-user` or from the simulated user) and
 * what the agent is told when no one answers or when a submission is held for a user's follow-up.
 *
 * @example
 * const tools = [...DEFAULT_TOOLS, askUserTool];
 */
export const askUserTool: AgentTool = {
  name: ASK_USER_TOOL,
  description: 'Ask the user a question (to clarify an ambiguous request, or to check before doing something questionable) and wait for the answer.',
  schema: z.object({ question: z.string().min(1).max(8000).describe('The question, as you would ask it in a chat') }).strict(),
  // The agent loop answers ask_user itself (it needs the attempt's user turns and simulated user).
  async run() {
    return { content: 'Error: ask_user is answered by the agent loop', isError: true };
  },
} as AgentTool;

export const NO_ANSWER = 'The user did not answer; go on with your own judgement.';
export const SUBMIT_HELD = 'Not submitted yet: the user has a follow-up before you finish (see their message). Call submit again when you are done.';
