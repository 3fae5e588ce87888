/**
 * One trajectory → training rows (the rows of a shard, before Parquet), from the token ids the server sampled: text is
 * never re-tokenised.
 *
 * - **Merging turns.** The assistant lines are taken in order. A turn whose `promptTokenIds` starts with the current
 *   row's full ids (its prompt and every completion so far) extends that row: the new prompt's tail (tool output, the
 *   next user message, the chat template's markers) is appended with loss mask 0, then the completion with mask 1. That
 *   is the usual multi-turn case. Otherwise (the template re-rendered history differently, context was trimmed) the
 *   turn starts a new row with its whole prompt. A row's `sample_id` is `<attemptId>#<its first turn>`.
 * - **Masks.** `loss_mask` is 1 on completion tokens only; `behaviour_logprobs` holds the sampled log-prob there and 0
 *   elsewhere.
 * - **Decision spans.** A decision record points at an assistant message (`messageId`) and, when known, at token
 *   indexes inside that message's completion (`tokenSpan`); its span in the row is those positions (the whole
 *   completion without `tokenSpan`). A decision whose message is not in the trajectory, or whose span falls outside the
 *   completion, is left out and reported back (`skippedDecisions`).
 * - **Text-only rollouts.** A trajectory in which any assistant turn lacks prompt ids, completion ids or log-probs of the
 *   completion's length (a hosted API) gives exactly one row with `has_token_ids = false`, empty token columns and no
 *   spans: it is counted (`textOnlyRows`), carries its reward and group so the group's statistics see it, and stays out
 *   of the policy-gradient term (no tokens to put a loss on). Its decisions are not turned into spans (a span indexes
 *   tokens), and are reported back as skipped.
 *
 * @example
 * const { rows } = trajectoryRows(trajectory, { groupId: 'run-1#calc/add', reward: 1 }, decisions);
 * rows[0].inputIds; // prompt + completion ids exactly as sampled
 */
import type { AssistantLine, Trajectory } from '../../harness/trajectory/trajectory-schema.ts';
import type { DecisionRecord } from '../schemas.ts';

/** A decision as the builder uses it: the record, and whether the teacher's own choice was verified (false unless known). */
export type DatasetDecision = DecisionRecord & { verified?: boolean };

export interface RowSpan {
  /** First token position in the row's `input_ids`. */
  start: number;
  /** One past the last. */
  end: number;
  decisionId: string;
  hint: string;
  verified: boolean;
}

/** One training row: the values of `SHARD_COLUMNS` for one sequence. */
export interface ShardRow {
  sampleId: string;
  groupId: string;
  taskId: string;
  attemptId: string;
  policyCheckpoint: string;
  policyVersion: string;
  inputIds: number[];
  lossMask: number[];
  behaviourLogprobs: number[];
  reward: number;
  hasTokenIds: boolean;
  spans: RowSpan[];
}

export interface RowContext {
  groupId: string;
  reward: number;
  /** Defaults to the trajectory header's task id (`''` when absent). */
  taskId?: string;
}

export interface TrajectoryRows {
  rows: ShardRow[];
  textOnly: boolean;
  /** Decisions that became spans. */
  usedDecisions: string[];
  /** Decisions left out, and why. */
  skippedDecisions: Array<{ decisionId: string; reason: string }>;
}

/** Where one assistant turn's completion sits: its row and the positions of its completion tokens. */
interface TurnPlace {
  row: number;
  start: number;
  end: number;
}

type TokenTurn = AssistantLine & { tokens: { promptTokenIds: number[]; completionTokenIds: number[]; logprobs: number[] } };

function hasTokens(a: AssistantLine): a is TokenTurn {
  const t = a.tokens;
  return !!t?.promptTokenIds && !!t.completionTokenIds && !!t.logprobs && t.logprobs.length === t.completionTokenIds.length;
}

function startsWith(ids: readonly number[], prefix: readonly number[]): boolean {
  if (prefix.length > ids.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}

/**
 * The rows of one trajectory (none when it has no assistant turn). See the file's comment for the rules.
 *
 * @example
 * trajectoryRows(trajectory, { groupId: 'run-1#t', reward: 0 }, []).rows.length; // 1 for a usual multi-turn rollout
 */
export function trajectoryRows(trajectory: Trajectory, context: RowContext, decisions: readonly DatasetDecision[]): TrajectoryRows {
  const { header } = trajectory;
  const turns = trajectory.steps.filter((s): s is AssistantLine => s.type === 'assistant');
  const policy = header.policy ?? turns.find((t) => t.policy)?.policy;
  const base = {
    groupId: context.groupId,
    taskId: context.taskId ?? header.taskId ?? '',
    attemptId: header.attemptId,
    policyCheckpoint: policy?.checkpoint ?? '',
    policyVersion: policy?.weightVersion === undefined ? '' : String(policy.weightVersion),
    reward: context.reward,
  };
  if (turns.length === 0) return { rows: [], textOnly: false, usedDecisions: [], skippedDecisions: decisions.map((d) => ({ decisionId: d.decisionId, reason: 'the trajectory has no assistant turn' })) };

  if (!turns.every(hasTokens)) {
    const row: ShardRow = { ...base, sampleId: `${header.attemptId}#${turns[0]!.turn}`, inputIds: [], lossMask: [], behaviourLogprobs: [], hasTokenIds: false, spans: [] };
    return { rows: [row], textOnly: true, usedDecisions: [], skippedDecisions: decisions.map((d) => ({ decisionId: d.decisionId, reason: 'text-only rollout: no token ids to place the span on' })) };
  }

  const rows: ShardRow[] = [];
  const places = new Map<string, TurnPlace>();
  for (const turn of turns as TokenTurn[]) {
    const { promptTokenIds: prompt, completionTokenIds: completion, logprobs } = turn.tokens;
    let row = rows.at(-1);
    if (!row || !startsWith(prompt, row.inputIds)) {
      row = { ...base, sampleId: `${header.attemptId}#${turn.turn}`, inputIds: [], lossMask: [], behaviourLogprobs: [], hasTokenIds: true, spans: [] };
      rows.push(row);
    }
    // The prompt's new tail (all of it in a new row): tool output, user messages, template markers; never trained on.
    for (let i = row.inputIds.length; i < prompt.length; i++) {
      row.inputIds.push(prompt[i]!);
      row.lossMask.push(0);
      row.behaviourLogprobs.push(0);
    }
    const start = row.inputIds.length;
    for (let i = 0; i < completion.length; i++) {
      row.inputIds.push(completion[i]!);
      row.lossMask.push(1);
      row.behaviourLogprobs.push(logprobs[i]!);
    }
    places.set(turn.messageId, { row: rows.length - 1, start, end: row.inputIds.length });
  }

  const usedDecisions: string[] = [];
  const skippedDecisions: TrajectoryRows['skippedDecisions'] = [];
  for (const d of [...decisions].sort((a, b) => a.decisionId.localeCompare(b.decisionId))) {
    const place = places.get(d.messageId);
    if (!place) {
      skippedDecisions.push({ decisionId: d.decisionId, reason: `message ${d.messageId} is not an assistant turn of the trajectory` });
      continue;
    }
    const length = place.end - place.start;
    const span = d.tokenSpan ?? { start: 0, end: length };
    if (span.end > length || span.start >= span.end) {
      skippedDecisions.push({ decisionId: d.decisionId, reason: `token span [${span.start}, ${span.end}) is outside the message's ${length} completion tokens` });
      continue;
    }
    rows[place.row]!.spans.push({ start: place.start + span.start, end: place.start + span.end, decisionId: d.decisionId, hint: d.hint.text, verified: d.verified === true });
    usedDecisions.push(d.decisionId);
  }
  for (const row of rows) row.spans.sort((a, b) => a.start - b.start || a.decisionId.localeCompare(b.decisionId));
  return { rows, textOnly: false, usedDecisions, skippedDecisions };
}
