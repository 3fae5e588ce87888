import type { BehaviourEvent } from '../task/behaviour-schema.ts';

/**
 * What fires when in a behavioural case: each item (a user turn, a tool change) fires once, `afterTurn: n` or on its
 * `occurrence`-th matching event (`lib/harness/task/behaviour-schema.ts` lists the events).
 *
 * @example
 * const triggers = new Triggers(task.behaviour.userTurns);
 * triggers.onEvent({ kind: 'tool-call', tool: 'read_file' }); // the turns that fire now, with their index
 * triggers.afterTurn(3);
 */
export interface AgentEvent {
  kind: BehaviourEvent;
  tool?: string;
  service?: string;
}

export interface TriggerItem {
  afterTurn?: number | undefined;
  on?: BehaviourEvent | undefined;
  calledTool?: string | undefined;
  service?: string | undefined;
  occurrence?: number | undefined;
}

export interface Fired<T> {
  item: T;
  index: number;
}

/** The trigger as a small object for events (`{ afterTurn: 2 }`, `{ on: 'tool-call', calledTool: 'bash' }`). */
export function describeTrigger(t: TriggerItem): Record<string, unknown> {
  if (t.afterTurn !== undefined) return { afterTurn: t.afterTurn };
  return { on: t.on, ...(t.calledTool ? { calledTool: t.calledTool } : {}), ...(t.service ? { service: t.service } : {}), ...(t.occurrence ? { occurrence: t.occurrence } : {}) };
}

export class Triggers<T extends TriggerItem> {
  readonly #items: readonly T[];
  readonly #seen: number[];
  readonly #fired: boolean[];

  constructor(items: readonly T[]) {
    this.#items = items;
    this.#seen = items.map(() => 0);
    this.#fired = items.map(() => false);
  }

  /** Counts an event; returns the items it fires (in their order). */
  onEvent(event: AgentEvent, filter: (item: T) => boolean = () => true): Array<Fired<T>> {
    const fired: Array<Fired<T>> = [];
    this.#items.forEach((item, index) => {
      if (this.#fired[index] || item.on !== event.kind || !filter(item)) return;
      if (item.calledTool !== undefined && item.calledTool !== event.tool) return;
      if (item.service !== undefined && item.service !== event.service) return;
      this.#seen[index]!++;
      if (this.#seen[index]! >= (item.occurrence ?? 1)) {
        this.#fired[index] = true;
        fired.push({ item, index });
      }
    });
    return fired;
  }

  /** The items due after the agent's `turn`-th message (those of earlier turns not yet fired included). */
  afterTurn(turn: number): Array<Fired<T>> {
    const fired: Array<Fired<T>> = [];
    this.#items.forEach((item, index) => {
      if (this.#fired[index] || item.afterTurn === undefined || item.afterTurn > turn) return;
      this.#fired[index] = true;
      fired.push({ item, index });
    });
    return fired;
  }

  /** Whether any item waits on this event kind (and has not fired). */
  waitsOn(kind: BehaviourEvent): boolean {
    return this.#items.some((item, index) => !this.#fired[index] && item.on === kind);
  }
}
