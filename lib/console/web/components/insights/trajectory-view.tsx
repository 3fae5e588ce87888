/**
 * An attempt's trajectory as a person reads it: one block per step (system or user message, the model's turn, an
 * event, the outcome), each tool call under its turn with its name, its arguments and the tool's answer (exit code,
 * error marked), long texts folded. A step where a decision record put the bad decision carries the hint; a step an
 * integrity flag points at says so.
 *
 * @example
 * <TrajectoryView steps={page.steps} decisions={detail.decisions} flags={detail.integrity.flags} />
 */
import type { AttemptDetailView, BoundedText, TrajectoryStepView } from './api-views.ts';
import { CollapsibleText } from './collapsible-text.tsx';
import { formatDuration, formatNumber } from '../format.ts';

type Decision = AttemptDetailView['decisions'][number];
type Flag = AttemptDetailView['integrity']['flags'][number];
type ToolResult = Extract<TrajectoryStepView, { type: 'tool_result' }>;

function Text(props: { value: BoundedText; label: string; lines?: number }) {
  const { value } = props;
  return (
    <>
      <CollapsibleText text={value.text} label={props.label} {...(props.lines !== undefined ? { lines: props.lines } : {})} />
      {value.truncated && <div class="muted">(cut by the API: {formatNumber(value.bytes)} bytes in all)</div>}
    </>
  );
}

/** Steps apart from each other, the speaker first. */
const STEP_STYLE = { margin: '10px 0', paddingTop: '6px', borderTop: '1px solid #e5e7eb' };
const ROLE_STYLE = { fontWeight: 600 };

/** Pretty-prints JSON arguments; anything else as it came. */
function argumentsText(value: BoundedText): BoundedText {
  if (value.truncated) return value;
  try {
    return { ...value, text: JSON.stringify(JSON.parse(value.text), null, 2) };
  } catch {
    return value;
  }
}

function DecisionNote(props: { decision: Decision }) {
  const d = props.decision;
  return (
    <div class="decision-note" role="note" style={{ borderLeft: '4px solid #b45309', background: '#fff8e6', padding: '4px 8px', margin: '4px 0' }}>
      <strong>Bad decision</strong> ({d.hintClass}, {d.status}){d.toolCallId ? ` at tool call ${d.toolCallId}` : ''} — hint: {d.hint}
    </div>
  );
}

function FlagNote(props: { flag: Flag }) {
  const f = props.flag;
  return (
    <div class="flag-note" role="note" style={{ borderLeft: '4px solid #cf222e', background: '#ffebe9', padding: '4px 8px', margin: '4px 0' }}>
      <strong>Integrity flag {f.kind}</strong> on {f.file}: {f.evidence}
    </div>
  );
}

function ToolCall(props: { call: { id: string; name: string; arguments: BoundedText }; result: ToolResult | undefined; decisions: Decision[]; flags: Flag[] }) {
  const { call, result } = props;
  return (
    <div class="tool-call" data-tool={call.name} style={{ marginLeft: '1em', borderLeft: '2px solid #d0d7de', paddingLeft: '8px' }}>
      <div>
        <strong>tool: {call.name}</strong> <span class="muted">{call.id}</span>
      </div>
      {props.decisions.map((d) => (
        <DecisionNote key={d.decisionId} decision={d} />
      ))}
      {props.flags.map((f, i) => (
        <FlagNote key={i} flag={f} />
      ))}
      <Text value={argumentsText(call.arguments)} label={`arguments of ${call.name}`} lines={10} />
      {result ? (
        <div class={`tool-result${result.isError ? ' tool-error' : ''}`}>
          <div class="muted">
            result{result.isError ? ' (error)' : ''}
            {result.exitCode !== undefined && result.exitCode !== null ? `, exit code ${result.exitCode}` : ''}, {formatDuration(result.durationMs)}
          </div>
          <Text value={result.content} label={`result of ${call.name}`} lines={12} />
        </div>
      ) : (
        <div class="muted">no result recorded</div>
      )}
    </div>
  );
}

function Step(props: { step: TrajectoryStepView; results: Map<string, ToolResult>; decisions: Decision[]; flags: Flag[] }) {
  const { step } = props;
  switch (step.type) {
    case 'message':
      return (
        <div class={`step step-${step.role}`} data-seq={step.seq} style={STEP_STYLE}>
          <div class="step-role" style={ROLE_STYLE}>{step.role}</div>
          <Text value={step.content} label={`${step.role} message`} lines={step.role === 'system' ? 4 : 12} />
        </div>
      );
    case 'assistant': {
      const mine = props.decisions.filter((d) => d.messageId === step.messageId);
      const myFlags = props.flags.filter((f) => f.messageId === step.messageId);
      return (
        <div class="step step-assistant" id={`step-${step.messageId}`} data-seq={step.seq} style={STEP_STYLE}>
          <div class="step-role" style={ROLE_STYLE}>
            assistant, turn {step.turn} <span class="muted">({formatNumber(step.usage.promptTokens)} prompt + {formatNumber(step.usage.completionTokens)} completion tokens, {formatDuration(step.durationMs)}, {step.finishReason})</span>
          </div>
          {mine
            .filter((d) => !d.toolCallId || !step.toolCalls.some((c) => c.id === d.toolCallId))
            .map((d) => (
              <DecisionNote key={d.decisionId} decision={d} />
            ))}
          {step.reasoning && step.reasoning.text !== '' && (
            <details>
              <summary>reasoning</summary>
              <Text value={step.reasoning} label="reasoning" />
            </details>
          )}
          {step.content.text !== '' && <Text value={step.content} label="assistant message" />}
          {step.toolCalls.map((call) => (
            <ToolCall key={call.id} call={call} result={props.results.get(call.id)} decisions={mine.filter((d) => d.toolCallId === call.id)} flags={myFlags.filter((f) => f.toolCallId === call.id)} />
          ))}
        </div>
      );
    }
    case 'tool_result':
      // Shown under its call; only an answer whose call is not on this page stands alone.
      return (
        <div class="step step-tool" data-seq={step.seq} style={STEP_STYLE}>
          <div class="step-role" style={ROLE_STYLE}>
            tool result: {step.name}
            {step.isError ? ' (error)' : ''}
          </div>
          <Text value={step.content} label={`result of ${step.name}`} />
        </div>
      );
    case 'event':
      return (
        <div class="step step-event" data-seq={step.seq} style={{ ...STEP_STYLE, color: '#9a6700' }}>
          event <strong>{step.kind}</strong>: {step.message.text}
        </div>
      );
    case 'outcome':
      return (
        <div class="step step-outcome" data-seq={step.seq} style={STEP_STYLE}>
          <strong>outcome</strong>: {step.stopReason}
          {step.limitsHit.length ? `, limits hit: ${step.limitsHit.join(', ')}` : ''}, {step.turns} turns, {formatDuration(step.durationMs)}
          {step.costUsd !== undefined ? `, $${step.costUsd.toFixed(4)}` : ''}
        </div>
      );
  }
}

export function TrajectoryView(props: { steps: TrajectoryStepView[]; decisions: Decision[]; flags: Flag[] }) {
  const calls = new Set(props.steps.flatMap((s) => (s.type === 'assistant' ? s.toolCalls.map((c) => c.id) : [])));
  const results = new Map<string, ToolResult>();
  for (const s of props.steps) if (s.type === 'tool_result') results.set(s.toolCallId, s);
  return (
    <div class="trajectory">
      {props.steps
        .filter((s) => s.type !== 'tool_result' || !calls.has(s.toolCallId))
        .map((s) => (
          <Step key={s.seq} step={s} results={results} decisions={props.decisions} flags={props.flags} />
        ))}
    </div>
  );
}
