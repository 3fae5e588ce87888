import type { ChatMessage, ModelsPort, Usage } from '../../ports/models.ts';
import type { SimulatedUser } from '../task/behaviour-schema.ts';

/**
 * A model-driven user with a persona and a goal (τ-bench's user simulator): the agent asks (the `ask_user` tool, or an
 * answer without a tool call) and the user model answers in character, from what the user knows, never more than the
 * agent asked. The user ends the conversation by saying the stop phrase, or by running out of `maxTurns`; after
 * that the agent is told the user has left.
 *
 * The user's model is a ModelsPort of its own (`RunAgentInput.userModel`): never the policy under test by default,
 * which would let the model write its own user's lines (an easier, self-agreeing conversation) and spend its tokens.
 *
 * @example
 * const user = new SimulatedUserSession(task.behaviour.simulatedUser, userModel, task.instruction);
 * const r = await user.reply('Which database should the migration target?');
 * if (r.kind === 'reply') console.log(r.text, r.ended);
 */
export type SimulatedReply =
  | { kind: 'reply'; text: string; ended: boolean; usage: Usage; model: string; turn: number }
  | { kind: 'gone'; text: string };

export const USER_GONE = 'The user has left the conversation and will not answer; go on with your own judgement.';

export function simulatedUserPrompt(config: SimulatedUser, instruction: string): string {
  return [
    'You play a user talking to an AI coding assistant. Stay in character; never say you are an AI or a simulation.',
    `Who you are: ${config.persona}`,
    `What you want: ${config.goal}`,
    ...(config.knowledge ? [`What you know (say only what the assistant asks for): ${config.knowledge}`] : []),
    `Your opening request to the assistant was:\n${instruction}`,
    'Answer the assistant\'s latest message briefly, as this user would. Do not do the work yourself and do not volunteer details it did not ask for.',
    `When your goal is met, or you have nothing more to say, end your message with ${config.stopPhrase}`,
  ].join('\n\n');
}

export class SimulatedUserSession {
  readonly #config: SimulatedUser;
  readonly #model: ModelsPort;
  readonly #messages: ChatMessage[];
  #turns = 0;
  #ended = false;

  constructor(config: SimulatedUser, model: ModelsPort, instruction: string) {
    this.#config = config;
    this.#model = model;
    this.#messages = [{ role: 'system', content: simulatedUserPrompt(config, instruction) }];
  }

  get active(): boolean {
    return !this.#ended && this.#turns < this.#config.maxTurns;
  }

  /** The user's answer to what the agent said; a model error propagates (the caller sorts it as infrastructure). */
  async reply(agentText: string, signal?: AbortSignal): Promise<SimulatedReply> {
    if (!this.active) return { kind: 'gone', text: USER_GONE };
    this.#messages.push({ role: 'user', content: agentText.trim() === '' ? '(the assistant said nothing)' : agentText });
    const r = await this.#model.chat({ messages: this.#messages, sampling: { temperature: this.#config.temperature }, returnTokens: false, ...(signal ? { signal } : {}) });
    this.#turns++;
    const raw = r.message.content.trim();
    this.#messages.push({ role: 'assistant', content: raw });
    const ended = raw.includes(this.#config.stopPhrase) || this.#turns >= this.#config.maxTurns;
    if (raw.includes(this.#config.stopPhrase)) this.#ended = true;
    const text = raw.split(this.#config.stopPhrase).join('').trim() || '(no answer)';
    return { kind: 'reply', text, ended, usage: r.usage, model: r.model, turn: this.#turns };
  }
}
