import { z } from 'zod';
import type { CustomTool, ToolChange } from '../task/behaviour-schema.ts';
import { execOutcome, toolDefinitions, type AgentTool } from './agent-tools.ts';
import { describeTrigger, Triggers, type AgentEvent } from './behaviour-triggers.ts';
import type { ToolDefinition } from '../../ports/models.ts';

/**
 * Tools that come and go during an attempt. The schedule starts from every tool the attempt may use, less those whose
 * first change is `add`; a change fires once (after turn n or on an event) and takes effect after the turn that fired
 * it, so the next model call sees the new tool list (and, unless the change says `notice: ''`, a one-line notice). A
 * call to a removed tool gets an error saying it is no longer available.
 *
 * @example
 * const schedule = new ToolSchedule([...DEFAULT_TOOLS, ...services.tools], task.behaviour.tools?.changes ?? []);
 * schedule.onEvent({ kind: 'tool-call', tool: 'read_file' });
 * for (const applied of schedule.applyPending()) recorder.event({ kind: `tool.${applied.change}ed`, … });
 */
export interface AppliedChange {
  tool: string;
  change: 'add' | 'remove';
  index: number;
  trigger: Record<string, unknown>;
  /** What the agent is told ('' for nothing). */
  notice: string;
}

export class ToolSchedule {
  readonly #all: Map<string, AgentTool>;
  /** Each tool's definition, built once: the model is offered the active ones on every turn. */
  readonly #definitions: Map<string, ToolDefinition>;
  readonly #active = new Set<string>();
  readonly #removed = new Set<string>();
  readonly #triggers: Triggers<ToolChange>;
  #pending: Array<{ change: ToolChange; index: number }> = [];

  constructor(tools: readonly AgentTool[], changes: readonly ToolChange[]) {
    this.#all = new Map(tools.map((t) => [t.name, t]));
    this.#definitions = new Map(toolDefinitions(tools).map((d) => [d.name, d]));
    this.#triggers = new Triggers(changes);
    for (const t of tools) {
      const first = changes.find((c) => c.tool === t.name);
      if (first?.change !== 'add') this.#active.add(t.name);
    }
  }

  /** The tools offered now, in their original order. */
  active(): AgentTool[] {
    return [...this.#all.values()].filter((t) => this.#active.has(t.name));
  }

  definitions(): ToolDefinition[] {
    return this.active().map((t) => this.#definitions.get(t.name)!);
  }

  get(name: string): AgentTool | undefined {
    return this.#active.has(name) ? this.#all.get(name) : undefined;
  }

  /** Whether the tool was offered earlier in the attempt and has been taken away. */
  wasRemoved(name: string): boolean {
    return this.#removed.has(name) && !this.#active.has(name);
  }

  onEvent(event: AgentEvent): void {
    for (const f of this.#triggers.onEvent(event)) this.#pending.push({ change: f.item, index: f.index });
  }

  afterTurn(turn: number): void {
    for (const f of this.#triggers.afterTurn(turn)) this.#pending.push({ change: f.item, index: f.index });
  }

  /** Applies the changes that fired, in the task's order; returns those that changed something. */
  applyPending(): AppliedChange[] {
    const due = this.#pending.sort((a, b) => a.index - b.index);
    this.#pending = [];
    const applied: AppliedChange[] = [];
    for (const { change, index } of due) {
      const has = this.#active.has(change.tool);
      if (change.change === 'add' ? has : !has) continue;
      if (change.change === 'add') {
        this.#active.add(change.tool);
        this.#removed.delete(change.tool);
      } else {
        this.#active.delete(change.tool);
        this.#removed.add(change.tool);
      }
      const tool = this.#all.get(change.tool);
      const notice =
        change.notice ??
        (change.change === 'add'
          ? `[harness] A new tool is available: ${change.tool}${tool ? ` (${tool.description})` : ''}.`
          : `[harness] The tool ${change.tool} is no longer available.`);
      applied.push({ tool: change.tool, change: change.change, index, trigger: describeTrigger(change), notice });
    }
    return applied;
  }
}

const PARAM_TYPES = { string: () => z.string(), number: () => z.number(), boolean: () => z.boolean() } as const;

/** A task's own tool: a command run in the sandbox with the arguments as JSON on stdin, or a fixed answer. */
export function customTool(def: CustomTool): AgentTool {
  const shape = Object.fromEntries(
    Object.entries(def.parameters).map(([name, p]) => {
      const base = PARAM_TYPES[p.type]();
      const described = p.description ? base.describe(p.description) : base;
      return [name, p.required ? described : described.optional()];
    }),
  );
  return {
    name: def.name,
    description: def.description,
    schema: z.object(shape).strict(),
    async run(args: unknown, ctx) {
      if (def.respond !== undefined) return { content: def.respond, isError: false };
      return execOutcome(await ctx.sandbox.exec(def.command!, { timeoutMs: ctx.timeoutMs, stdin: JSON.stringify(args) }));
    },
  } as AgentTool;
}
