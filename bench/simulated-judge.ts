/**
 * A SIMULATED LLM judge for the classifier benches: a real HTTP server (test/support/scripted-model-server.ts,
 * OpenAI chat-completions wire format) scripted to answer the pipeline's judge (`lib/modes/judge-signal.ts`) from an
 * oracle (the held-out labels), wrong on purpose a set share of the time, and malformed on purpose now and then so the
 * judge's retry path runs. Its accuracy is a parameter, not a measurement: numbers made with it show what the chain's
 * routing does with a judge that good, never how good a real model is.
 */
import { createHash } from 'node:crypto';
import { JUDGE_TOOL } from '../lib/modes/judge-signal.ts';
import { reply, startScriptedModelServer, type RecordedRequest, type ScriptStep, type ScriptedModelServer } from '../test/support/scripted-model-server.ts';

export interface SimulatedJudgeOptions {
  /** Share of answers that carry exactly the oracle's label set. */
  accuracy: number;
  /** Share of first answers that are malformed JSON (the judge retries; the retry is answered properly). */
  malformedShare?: number;
  /** Share of items whose every answer is malformed (the judge gives up: the chain sends them to human review). */
  brokenShare?: number;
  /** Delay per answer, to mimic a model's latency. */
  delayMs?: number;
}

export interface SimulatedJudge {
  server: ScriptedModelServer;
  /** `openai:<model>@<baseUrl>` for `createModel`. */
  spec: string;
  close(): Promise<void>;
}

/** Deterministic uniform [0, 1) from a string. */
function unit(seed: string): number {
  return createHash('sha256').update(seed).digest().readUInt32BE(0) / 2 ** 32;
}

/** The comment the judge was shown: between the `<<<` and `>>>` fences of the user message. */
function commentOf(request: RecordedRequest): string | undefined {
  const messages = request.body['messages'] as { role: string; content?: string }[] | undefined;
  const user = messages?.find((m) => m.role === 'user')?.content ?? '';
  const m = /Comment:\n<<<\n([\s\S]*?)\n>>>/.exec(user);
  return m?.[1];
}

/**
 * @param oracle comment text → the true mode ids
 * @param modes the taxonomy's mode ids (wrong answers are drawn from them)
 */
export async function startSimulatedJudge(oracle: Map<string, string[]>, modes: readonly string[], options: SimulatedJudgeOptions): Promise<SimulatedJudge> {
  const malformed = options.malformedShare ?? 0.03;
  const broken = options.brokenShare ?? 0.02;
  const seen = new Map<string, number>();
  const server = await startScriptedModelServer((request): ScriptStep => {
    const comment = commentOf(request) ?? '';
    const truth = oracle.get(comment);
    const attempt = (seen.get(comment) ?? 0) + 1;
    seen.set(comment, attempt);
    const extra = options.delayMs ? { delayMs: options.delayMs } : {};
    if (truth === undefined) return reply.tool(JUDGE_TOOL, { modes: [], evidence: '', evidenceSource: 'comment', confidence: 0.3 }, extra);
    if (unit(`broken:${comment}`) < broken) return reply.tool(JUDGE_TOOL, 'not json at all', extra);
    if (attempt === 1 && unit(`malformed:${comment}`) < malformed) return reply.tool(JUDGE_TOOL, '{"modes": [{"mode": ', extra);
    let labels = [...truth];
    const right = unit(`right:${comment}`) < options.accuracy;
    if (!right) {
      // A plausible mistake: swap one true mode for a wrong one, or add a wrong one to an empty set.
      const wrong = modes.filter((m) => !truth.includes(m));
      const pick = wrong[Math.floor(unit(`pick:${comment}`) * wrong.length)]!;
      labels = labels.length === 0 ? [pick] : [pick, ...labels.slice(1)];
    }
    const evidence = comment.split(/(?<=[.!?])\s/)[0]!.slice(0, 120).trim();
    return reply.tool(
      JUDGE_TOOL,
      {
        modes: labels.map((mode) => ({ mode, severity: 'medium' })),
        evidence: labels.length > 0 ? evidence : '',
        evidenceSource: 'comment',
        confidence: right ? 0.9 : 0.7,
      },
      extra,
    );
  });
  return { server, spec: `openai:simulated-judge@${server.baseUrl}`, close: () => server.close() };
}
