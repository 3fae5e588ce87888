import type {
  AssistantLine,
  EventLine,
  HeaderLine,
  MessageLine,
  OutcomeLine,
  StepLine,
  ToolResultLine,
  Trajectory,
} from './trajectory-schema.ts';
import { toJsonl } from './trajectory-schema.ts';

type Omit2<T> = T extends unknown ? Omit<T, 'seq' | 'at' | 'type'> : never;

/** Appends trajectory lines in order, stamping `seq` and `at`; the agent loop owns one per attempt. */
export class TrajectoryRecorder {
  readonly header: HeaderLine;
  readonly steps: StepLine[] = [];
  readonly #now: () => Date;

  constructor(header: HeaderLine, now: () => Date = () => new Date()) {
    this.header = header;
    this.#now = now;
  }

  #stamp<T extends StepLine['type']>(type: T, body: object): Extract<StepLine, { type: T }> {
    const line = { type, seq: this.steps.length + 1, at: this.#now().toISOString(), ...body } as Extract<StepLine, { type: T }>;
    this.steps.push(line);
    return line;
  }

  message(body: Omit2<MessageLine>): MessageLine {
    return this.#stamp('message', body);
  }
  assistant(body: Omit2<AssistantLine>): AssistantLine {
    return this.#stamp('assistant', body);
  }
  toolResult(body: Omit2<ToolResultLine>): ToolResultLine {
    return this.#stamp('tool_result', body);
  }
  event(body: Omit2<EventLine>): EventLine {
    return this.#stamp('event', body);
  }
  outcome(body: Omit2<OutcomeLine>): OutcomeLine {
    return this.#stamp('outcome', body);
  }

  events(): EventLine[] {
    return this.steps.filter((s): s is EventLine => s.type === 'event');
  }

  toTrajectory(): Trajectory {
    return { header: this.header, steps: [...this.steps] };
  }

  toJsonl(): string {
    return toJsonl(this.toTrajectory());
  }
}
