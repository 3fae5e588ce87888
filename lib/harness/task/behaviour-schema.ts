/**
 * Behavioural cases: what happens around the agent during an attempt besides the instruction — scripted user turns,
 * a simulated user, tools that come and go, fake external services with scripted state. Absent: a plain task.
 *
 * Triggers. A user turn or a tool change fires once, either `afterTurn: n` (after the agent's n-th assistant message
 * and its tool results, before the next model call) or `on: <event>`, where the event is one of `BEHAVIOUR_EVENTS`:
 * - `tool-call`: the agent called a tool (`calledTool` narrows it to one tool's name);
 * - `service-call`: the agent called a fake service's tool (`service` narrows it to `chat` or `incidents`, `calledTool`
 *   to one tool);
 * - `submit`: the agent called `submit`. A user turn on `submit` holds the submission (the agent is told the user has
 *   a follow-up, and the attempt goes on); a tool change on `submit` only applies if a user turn holds it too;
 * - `ask-user`: the agent called `ask_user`. A user turn on `ask-user` is the user's answer (the tool's result);
 * - `no-tool-call`: the agent answered without calling a tool. A user turn on it replaces the harness's nudge.
 * `occurrence: k` fires on the k-th matching event (default the first).
 *
 * The agent asks the user through the `ask_user` tool (offered whenever the task has user turns or a simulated user);
 * a simulated user also answers an assistant message without a tool call (as a user would in a chat), when no scripted
 * turn does.
 *
 * @example
 * const behaviour = parseTaskBehaviour({
 *   userTurns: [{ afterTurn: 2, text: 'Stop: the build on main is red, fix that first.' }],
 *   tools: { changes: [{ tool: 'bash', change: 'remove', afterTurn: 4 }] },
 *   services: { chat: { channels: [{ name: 'eng', messages: [{ user: 'ana', text: 'Post here when done.' }] }] } },
 * });
 */
import { z } from 'zod';
import { ValidationError } from '../../errors.ts';

export const BEHAVIOUR_EVENTS = ['tool-call', 'service-call', 'submit', 'ask-user', 'no-tool-call'] as const;
export type BehaviourEvent = (typeof BEHAVIOUR_EVENTS)[number];

export const SERVICE_NAMES = ['chat', 'incidents'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** The agent's built-in tools (`lib/harness/agent/agent-tools.ts`), and `ask_user`. */
export const BUILTIN_TOOL_NAMES = ['bash', 'read_file', 'write_file', 'edit', 'list', 'search', 'submit'] as const;
export const ASK_USER_TOOL = 'ask_user' as const;

/** The tools each fake service exposes (`lib/harness/services/`). */
export const SERVICE_TOOL_NAMES: Record<ServiceName, readonly string[]> = {
  chat: ['chat_list_channels', 'chat_read', 'chat_post'],
  incidents: ['metrics_list', 'metrics_query', 'incidents_list', 'incident_get', 'incident_update'],
};

const ToolName = z.string().regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/, 'a tool name: a letter, then letters, digits, _ or - (64 at most)');
const Text = (max: number) => z.string().min(1).max(max);
const IsoTime = z.iso.datetime({ offset: true, message: 'an ISO 8601 date-time (2026-12-03T10:00:00Z)' });

/** When a user turn or a tool change fires: `afterTurn: n`, or `on` an event (optionally narrowed, and its k-th time). */
const TriggerFields = {
  afterTurn: z.number().int().min(1).max(1000).optional(),
  on: z.enum(BEHAVIOUR_EVENTS).optional(),
  calledTool: ToolName.optional(),
  service: z.enum(SERVICE_NAMES).optional(),
  occurrence: z.number().int().min(1).max(100).optional(),
};
type TriggerShape = { afterTurn?: number | undefined; on?: BehaviourEvent | undefined; calledTool?: string | undefined; service?: ServiceName | undefined; occurrence?: number | undefined };

function checkTrigger(t: TriggerShape, ctx: z.core.$RefinementCtx<unknown>): void {
  if ((t.afterTurn === undefined) === (t.on === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['on'], message: 'give exactly one of afterTurn, on' });
    return;
  }
  if (t.on === undefined) {
    for (const f of ['calledTool', 'service', 'occurrence'] as const) if (t[f] !== undefined) ctx.addIssue({ code: 'custom', path: [f], message: `only with on (not with afterTurn)` });
    return;
  }
  if (t.calledTool !== undefined && t.on !== 'tool-call' && t.on !== 'service-call') ctx.addIssue({ code: 'custom', path: ['calledTool'], message: 'only with on: tool-call or service-call' });
  if (t.service !== undefined && t.on !== 'service-call') ctx.addIssue({ code: 'custom', path: ['service'], message: 'only with on: service-call' });
}

export const UserTurnSchema = z
  .strictObject({
    ...TriggerFields,
    /** What the user says: a follow-up, a correction, an interruption, or (on `ask-user`) an answer. */
    text: Text(8000),
  })
  .superRefine(checkTrigger);
export type UserTurn = z.output<typeof UserTurnSchema>;

export const SimulatedUserSchema = z.strictObject({
  /** Who the user is and how they talk ("a terse staff engineer who hates emojis"). */
  persona: Text(4000),
  /** What the user wants from the conversation; the user never says more than the agent needs to get there. */
  goal: Text(4000),
  /** Facts the user knows and gives only when asked (the answer to an ambiguity). */
  knowledge: z.string().max(8000).optional(),
  /** Replies at most; then the user has left and the agent is told so. */
  maxTurns: z.number().int().min(1).max(50).default(5),
  /** The user ends the conversation by saying it; the phrase is not shown to the agent. */
  stopPhrase: z.string().min(1).max(64).default('[DONE]'),
  /** The user model's temperature (default 0: replayable). */
  temperature: z.number().min(0).max(2).default(0),
});
export type SimulatedUser = z.output<typeof SimulatedUserSchema>;

const ParameterSchema = z.strictObject({
  type: z.enum(['string', 'number', 'boolean']),
  description: z.string().max(1000).optional(),
  required: z.boolean().default(true),
});

/** A tool only this task has (to discover and use): it runs a command in the sandbox, or answers with fixed text. */
export const CustomToolSchema = z
  .strictObject({
    name: ToolName,
    description: Text(2000),
    parameters: z.record(z.string().regex(/^[a-zA-Z][a-zA-Z0-9_]{0,63}$/, 'a parameter name'), ParameterSchema).default({}),
    /** Runs in the sandbox's workspace with the arguments as a JSON object on stdin; its output is the result. */
    command: z.string().min(1).max(4000).optional(),
    /** The fixed answer, when the tool runs nothing. */
    respond: z.string().max(16000).optional(),
  })
  .refine((t) => (t.command === undefined) !== (t.respond === undefined), { message: 'give exactly one of command, respond', path: ['command'] });
export type CustomTool = z.output<typeof CustomToolSchema>;

export const ToolChangeSchema = z
  .strictObject({
    /** The tool that comes or goes: built-in, `ask_user`, a service's, or one of `tools.define`. */
    tool: ToolName,
    change: z.enum(['add', 'remove']),
    ...TriggerFields,
    /** Said to the agent when the change happens; default a one-line notice naming the tool. `''`: say nothing. */
    notice: z.string().max(2000).optional(),
  })
  .superRefine(checkTrigger);
export type ToolChange = z.output<typeof ToolChangeSchema>;

export const ToolsBehaviourSchema = z.strictObject({
  define: z.array(CustomToolSchema).max(20).default([]),
  /** Applied in order. A tool whose first change is `add` is absent at the start. */
  changes: z.array(ToolChangeSchema).max(50).default([]),
});

export const ChatMessageSchema = z.strictObject({
  id: z.string().min(1).max(64).optional(),
  user: Text(64),
  text: Text(8000),
  at: IsoTime.optional(),
  /** The id of the message this one answers in a thread. */
  threadId: z.string().min(1).max(64).optional(),
});

/**
 * Whether a post answers a scripted reply's `match`: it contains the text (or any of the keywords), ignoring case.
 * @example
 * chatReplyMatches(['done', 'finished'], 'All DONE, deployed') === true;
 */
export function chatReplyMatches(match: string | readonly string[] | undefined, text: string): boolean {
  if (match === undefined) return true;
  const haystack = text.toLocaleLowerCase('en-US');
  return (typeof match === 'string' ? [match] : match).some((k) => haystack.includes(k.toLocaleLowerCase('en-US')));
}

export const ChatWorkspaceSchema = z.strictObject({
  /** The name the agent posts under. */
  me: Text(64).default('flywheel-agent'),
  channels: z
    .array(z.strictObject({ name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,79}$/, 'a channel name: lowercase letters, digits, _ -'), topic: z.string().max(500).optional(), messages: z.array(ChatMessageSchema).max(500).default([]) }))
    .min(1)
    .max(50),
  /**
   * Scripted replies: when the agent posts in `channel` (and the post contains `match`, or one of its keywords, as a
   * plain case-insensitive substring), `user` answers, once. Never a regular expression: the drafter writes it and it
   * runs on the agent's text, so a pattern could take unbounded time (`chatReplyMatches`).
   */
  replies: z
    .array(
      z.strictObject({
        channel: Text(80),
        match: z.union([Text(200), z.array(Text(200)).min(1).max(20)]).optional(),
        user: Text(64),
        text: Text(8000),
      }),
    )
    .max(50)
    .default([]),
});
export type ChatWorkspaceState = z.output<typeof ChatWorkspaceSchema>;

export const INCIDENT_STATUSES = ['open', 'acknowledged', 'mitigated', 'resolved'] as const;
export const INCIDENT_SEVERITIES = ['sev1', 'sev2', 'sev3', 'sev4'] as const;

export const IncidentServiceSchema = z.strictObject({
  metrics: z
    .array(
      z.strictObject({
        name: z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$/, 'a metric name'),
        labels: z.record(z.string().max(64), z.string().max(256)).default({}),
        unit: z.string().max(32).optional(),
        points: z.array(z.strictObject({ at: IsoTime, value: z.number() })).min(1).max(2000),
      }),
    )
    .max(100)
    .default([]),
  incidents: z
    .array(
      z.strictObject({
        id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'an incident id'),
        title: Text(500),
        status: z.enum(INCIDENT_STATUSES).default('open'),
        severity: z.enum(INCIDENT_SEVERITIES).default('sev3'),
        service: z.string().max(128).optional(),
        openedAt: IsoTime,
        summary: z.string().max(8000).optional(),
        notes: z.array(z.strictObject({ at: IsoTime, author: Text(64), text: Text(8000) })).max(200).default([]),
      }),
    )
    .max(100)
    .default([]),
});
export type IncidentServiceState = z.output<typeof IncidentServiceSchema>;

export const ServicesSchema = z.strictObject({ chat: ChatWorkspaceSchema.optional(), incidents: IncidentServiceSchema.optional() });
export type ServicesConfig = z.output<typeof ServicesSchema>;

export const TaskBehaviourSchema = z
  .strictObject({
    userTurns: z.array(UserTurnSchema).max(50).default([]),
    simulatedUser: SimulatedUserSchema.optional(),
    tools: ToolsBehaviourSchema.optional(),
    services: ServicesSchema.optional(),
  })
  .superRefine((b, ctx) => {
    const known = new Set<string>([...BUILTIN_TOOL_NAMES, ASK_USER_TOOL, ...(b.tools?.define ?? []).map((t) => t.name)]);
    for (const s of SERVICE_NAMES) if (b.services?.[s]) for (const t of SERVICE_TOOL_NAMES[s]) known.add(t);
    const defined = new Set<string>();
    (b.tools?.define ?? []).forEach((t, i) => {
      if ([...BUILTIN_TOOL_NAMES, ASK_USER_TOOL, ...Object.values(SERVICE_TOOL_NAMES).flat()].includes(t.name) || defined.has(t.name)) {
        ctx.addIssue({ code: 'custom', path: ['tools', 'define', i, 'name'], message: `${t.name} is already a tool's name` });
      }
      defined.add(t.name);
    });
    (b.tools?.changes ?? []).forEach((c, i) => {
      if (!known.has(c.tool)) ctx.addIssue({ code: 'custom', path: ['tools', 'changes', i, 'tool'], message: `no tool ${c.tool} (built-in, ask_user, a configured service's, or tools.define)` });
      if (c.tool === 'submit') ctx.addIssue({ code: 'custom', path: ['tools', 'changes', i, 'tool'], message: 'submit is always offered' });
    });
    const checkFilter = (list: ReadonlyArray<{ calledTool?: string | undefined; service?: ServiceName | undefined }>, at: string[]) =>
      list.forEach((t, i) => {
        if (t.calledTool !== undefined && !known.has(t.calledTool)) ctx.addIssue({ code: 'custom', path: [...at, i, 'calledTool'], message: `no tool ${t.calledTool} in this task` });
        if (t.service !== undefined && !b.services?.[t.service]) ctx.addIssue({ code: 'custom', path: [...at, i, 'service'], message: `services.${t.service} is not configured` });
      });
    checkFilter(b.userTurns, ['userTurns']);
    checkFilter(b.tools?.changes ?? [], ['tools', 'changes']);
    if (b.services?.chat) {
      const names = b.services.chat.channels.map((c) => c.name);
      names.forEach((n, i) => names.indexOf(n) !== i && ctx.addIssue({ code: 'custom', path: ['services', 'chat', 'channels', i, 'name'], message: `channel ${n} is named twice` }));
      b.services.chat.replies.forEach((r, i) => !names.includes(r.channel) && ctx.addIssue({ code: 'custom', path: ['services', 'chat', 'replies', i, 'channel'], message: `no channel ${r.channel}` }));
    }
    if (b.services?.incidents) {
      const ids = b.services.incidents.incidents.map((x) => x.id);
      ids.forEach((id, i) => ids.indexOf(id) !== i && ctx.addIssue({ code: 'custom', path: ['services', 'incidents', 'incidents', i, 'id'], message: `incident ${id} is named twice` }));
    }
  });
export type TaskBehaviour = z.output<typeof TaskBehaviourSchema>;
export type TaskBehaviourInput = z.input<typeof TaskBehaviourSchema>;

/**
 * Validates a task's `behaviour`; throws `Flywheel.ValidationError` naming every offending field
 * (`behaviour.userTurns.0.on: give exactly one of afterTurn, on`).
 *
 * @example
 * const behaviour = parseTaskBehaviour({ userTurns: [{ on: 'ask-user', text: 'Use the v2 API.' }] });
 */
export function parseTaskBehaviour(input: unknown, prefix = 'behaviour'): TaskBehaviour {
  const r = TaskBehaviourSchema.safeParse(input);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => ({ path: [prefix, ...i.path.map(String)].join('.'), message: i.message }));
  throw new ValidationError(`invalid ${prefix}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
}
