import { chatReplyMatches, type ChatWorkspaceState } from '../task/behaviour-schema.ts';

/**
 * A fake chat workspace (channels, messages, threads) with the state a task scripts: the agent reads channels and
 * posts to them through the `chat_*` tools; a scripted reply answers a post that matches it, once. The state is a
 * plain value the attempt keeps for the judge (`state()`).
 *
 * @example
 * const chat = new ChatWorkspace(task.behaviour.services.chat, () => new Date());
 * chat.post('eng', 'Deployed the fix.'); // { ok: true, message: { id: 'm3', … }, replies: [] }
 */
export interface ChatMessageView {
  id: string;
  user: string;
  text: string;
  at?: string;
  threadId?: string;
}

export interface ChatChannelView {
  name: string;
  topic?: string;
  messages: ChatMessageView[];
}

export interface ChatWorkspaceSnapshot {
  me: string;
  channels: ChatChannelView[];
  /** Indexes of `replies` already used. */
  repliesUsed: number[];
}

export type ChatResult<T> = { ok: true; value: T } | { ok: false; error: string };

export class ChatWorkspace {
  readonly #me: string;
  readonly #channels: ChatChannelView[];
  readonly #replies: ChatWorkspaceState['replies'];
  readonly #used = new Set<number>();
  readonly #now: () => Date;
  #next = 0;
  readonly #ids = new Set<string>();

  constructor(config: ChatWorkspaceState, now: () => Date = () => new Date()) {
    this.#me = config.me;
    this.#now = now;
    this.#replies = config.replies;
    for (const c of config.channels) for (const m of c.messages) if (m.id !== undefined) this.#ids.add(m.id);
    this.#channels = config.channels.map((c) => ({
      name: c.name,
      ...(c.topic !== undefined ? { topic: c.topic } : {}),
      messages: c.messages.map((m) => ({ id: m.id ?? this.#id(), user: m.user, text: m.text, ...(m.at ? { at: m.at } : {}), ...(m.threadId ? { threadId: m.threadId } : {}) })),
    }));
  }

  #id(): string {
    let id: string;
    do id = `m${++this.#next}`;
    while (this.#ids.has(id));
    this.#ids.add(id);
    return id;
  }

  #channel(name: string): ChatResult<ChatChannelView> {
    const channel = this.#channels.find((c) => c.name === name.replace(/^#/, ''));
    return channel ? { ok: true, value: channel } : { ok: false, error: `no channel "${name}"; channels: ${this.#channels.map((c) => c.name).join(', ')}` };
  }

  listChannels(): Array<{ name: string; topic?: string; messages: number }> {
    return this.#channels.map((c) => ({ name: c.name, ...(c.topic !== undefined ? { topic: c.topic } : {}), messages: c.messages.length }));
  }

  /** The last `limit` messages of a channel (or of one thread), oldest first. */
  read(channel: string, options: { limit?: number; threadId?: string } = {}): ChatResult<ChatMessageView[]> {
    const c = this.#channel(channel);
    if (!c.ok) return c;
    const inThread = options.threadId === undefined ? c.value.messages : c.value.messages.filter((m) => m.id === options.threadId || m.threadId === options.threadId);
    return { ok: true, value: inThread.slice(-(options.limit ?? 50)).map((m) => ({ ...m })) };
  }

  /** Posts as the agent; the scripted replies it triggers are posted after it (and returned). */
  post(channel: string, text: string, threadId?: string): ChatResult<{ message: ChatMessageView; replies: ChatMessageView[] }> {
    const c = this.#channel(channel);
    if (!c.ok) return c;
    if (threadId !== undefined && !c.value.messages.some((m) => m.id === threadId)) return { ok: false, error: `no message ${threadId} in ${c.value.name} to answer in a thread` };
    const message: ChatMessageView = { id: this.#id(), user: this.#me, text, at: this.#now().toISOString(), ...(threadId ? { threadId } : {}) };
    c.value.messages.push(message);
    const replies: ChatMessageView[] = [];
    this.#replies.forEach((r, i) => {
      if (this.#used.has(i) || r.channel.replace(/^#/, '') !== c.value.name) return;
      if (!chatReplyMatches(r.match, text)) return;
      this.#used.add(i);
      const reply: ChatMessageView = { id: this.#id(), user: r.user, text: r.text, at: this.#now().toISOString(), threadId: threadId ?? message.id };
      c.value.messages.push(reply);
      replies.push(reply);
    });
    return { ok: true, value: { message: { ...message }, replies } };
  }

  state(): ChatWorkspaceSnapshot {
    return { me: this.#me, channels: structuredClone(this.#channels), repliesUsed: [...this.#used].sort((a, b) => a - b) };
  }
}
