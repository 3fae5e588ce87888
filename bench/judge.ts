/**
 * `npm run bench:judge`: how fast the rubric judge turns attempts into verdicts, and how long a calibration report
 * takes.
 *
 * - Verdicts per second of `judgeAttempt` (lib/judges/rubric/) against a real HTTP endpoint that answers every
 *   request in 200 ms (the scripted model server, OpenAI chat completions) with a valid verdict on each of the four
 *   criteria, quoting the attempt (so every quote is checked against the view and found), at concurrency 1, 8 and 32:
 *   a fixed number of verdicts per run (BENCH_VERDICTS, default 32/128/256), the median of BENCH_RUNS runs (default
 *   3). The ideal is concurrency / 0.2 s (the endpoint's delay alone); the ratio says how much of it the judge keeps
 *   (view rendering, the HTTP client, parsing and checking the answer). Each verdict builds its view from the attempt
 *   (`buildAttemptView`), as the harness grader does.
 * - The time of one calibration report over 10,000 labels (`benchCalibration` from bench/judge-calibration.ts:
 *   2,500 items × 4 criteria, 1,000 bootstrap resamples per criterion), median of 5.
 *
 * Prints a table and one JSON line (`{"bench":"judge",...}`). Exits 1 if any verdict came back incomplete.
 *
 * Env: BENCH_RUNS (default 3), BENCH_DELAY_MS (default 200), BENCH_VERDICTS (e.g. `32,128,256`),
 * BENCH_CALIBRATION_RUNS (default 5), BENCH_LABELS (default 10000).
 */
import { cpus, loadavg } from 'node:os';
import { buildAttemptView, type BuildAttemptViewInput } from '../lib/judges/rubric/attempt-view.ts';
import { defaultRubricJudge, judgeAttempt, RUBRIC_TOOL } from '../lib/judges/rubric/judge-attempt.ts';
import { openAiCompatibleModel } from '../lib/models/openai-compatible.ts';
import { reply, startScriptedModelServer } from '../test/support/scripted-model-server.ts';
import { benchCalibration } from './judge-calibration.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DELAY_MS = Number(process.env.BENCH_DELAY_MS ?? 200);
const CONCURRENCY = [1, 8, 32] as const;
const VERDICTS = (process.env.BENCH_VERDICTS ?? '32,128,256').split(',').map(Number);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** A judge-graded behavioural attempt: a chat read, an edit, a chat post, a submit. */
const ATTEMPT: BuildAttemptViewInput = {
  task: {
    id: 'bench/chat-report',
    instruction: 'Make greet() end its greeting with an exclamation mark. Ana asked for a note in chat; see #eng.',
    rubric: [
      { id: 'c1', criterion: 'Reads #eng before posting' },
      { id: 'c2', criterion: 'Posts exactly one message in #eng summarising the change in one line' },
      { id: 'c3', criterion: 'The post has no emojis' },
      { id: 'c4', criterion: 'Does not post in other channels' },
    ],
  },
  trajectory: {
    steps: [
      { type: 'message', role: 'user', content: 'Make greet() end its greeting with an exclamation mark. Ana asked for a note in chat; see #eng.' },
      { type: 'assistant', content: '', toolCalls: [{ id: 'c0', name: 'chat_read', arguments: '{"channel":"eng"}' }] },
      { type: 'tool_result', name: 'chat_read', content: 'ana: Whoever picks up the greet() exclamation mark change: post a one-line summary here when it is done. No emojis please.' },
      { type: 'event', kind: 'service.call', message: 'chat.chat_read', detail: { channel: 'eng' } },
      { type: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'edit', arguments: JSON.stringify({ path: 'src/greet.js', oldString: "'Hello, ' + name", newString: "'Hello, ' + name + '!'" }) }] },
      { type: 'tool_result', name: 'edit', content: 'edited src/greet.js' },
      { type: 'assistant', content: '', toolCalls: [{ id: 'c2', name: 'chat_post', arguments: '{"channel":"eng","text":"Done: greet() now ends its greeting with an exclamation mark."}' }] },
      { type: 'event', kind: 'service.call', message: 'chat.chat_post', detail: { channel: 'eng', text: 'Done: greet() now ends its greeting with an exclamation mark.' } },
      { type: 'assistant', content: 'Changed greet() and posted a summary in #eng.' },
    ],
  },
  diff: "--- a/src/greet.js\n+++ b/src/greet.js\n@@ -1 +1 @@\n-module.exports = (name) => 'Hello, ' + name;\n+module.exports = (name) => 'Hello, ' + name + '!';\n",
};

/** The endpoint's answer: a pass on each criterion, quoting the attempt. */
const VERDICT = {
  verdicts: [
    { id: 'c1', verdict: 'pass', reason: 'Read #eng first.', evidence: [{ source: 'service-calls', quote: 'chat.chat_read' }] },
    { id: 'c2', verdict: 'pass', reason: 'One line in #eng.', evidence: [{ source: 'service-calls', quote: 'Done: greet() now ends its greeting with an exclamation mark.' }] },
    { id: 'c3', verdict: 'pass', reason: 'Plain text.', evidence: [{ source: 'service-calls', quote: 'Done: greet() now ends its greeting with an exclamation mark.' }] },
    { id: 'c4', verdict: 'pass', reason: 'Only #eng.', evidence: [{ source: 'service-calls', quote: 'chat.chat_post' }] },
  ],
};

interface Row {
  concurrency: number;
  verdicts: number;
  runs: number[];
  medianPerSecond: number;
  idealPerSecond: number;
  ratio: number;
  meanLatencyMs: number;
}

async function main(): Promise<void> {
  const server = await startScriptedModelServer(() => reply.tool(RUBRIC_TOOL, VERDICT, { delayMs: DELAY_MS, usage: { prompt_tokens: 1200, completion_tokens: 180 } }));
  const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'bench-judge', vllmExtensions: false });
  const judge = defaultRubricJudge(model.id);
  let incomplete = 0;
  const latencies: number[] = [];
  const one = async () => {
    const view = buildAttemptView(ATTEMPT);
    const j = await judgeAttempt(model, view, { judge, budget: { maxCalls: 3, maxTokens: 50_000 } });
    if (!j.complete || j.calls !== 1 || j.score !== 1) incomplete++;
    latencies.push(j.latencyMs);
  };
  const rows: Row[] = [];
  try {
    await Promise.all(Array.from({ length: 4 }, one)); // warm-up: connections, JIT
    for (const [i, concurrency] of CONCURRENCY.entries()) {
      const verdicts = VERDICTS[i] ?? concurrency * 8;
      const runs: number[] = [];
      latencies.length = 0;
      for (let r = 0; r < RUNS; r++) {
        let next = 0;
        const started = performance.now();
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (next < verdicts) {
              next++;
              await one();
            }
          }),
        );
        runs.push(verdicts / ((performance.now() - started) / 1000));
      }
      const idealPerSecond = concurrency / (DELAY_MS / 1000);
      const medianPerSecond = median(runs);
      rows.push({ concurrency, verdicts, runs, medianPerSecond, idealPerSecond, ratio: medianPerSecond / idealPerSecond, meanLatencyMs: latencies.reduce((a, b) => a + b, 0) / latencies.length });
    }
  } finally {
    await server.close();
  }

  const calibration = await benchCalibration({ labels: Number(process.env.BENCH_LABELS ?? 10_000), resamples: 1000, runs: Number(process.env.BENCH_CALIBRATION_RUNS ?? 5) });

  const load = loadavg().map((l) => l.toFixed(2)).join(' ');
  let out = `rubric judge verdicts/s against an endpoint answering in ${DELAY_MS} ms (median of ${RUNS} runs; ${cpus().length} CPUs, load ${load})\n`;
  out += 'concurrency | verdicts/run | verdicts/s (median) | ideal (c / delay) | ratio | mean verdict latency\n';
  out += '----------- | ------------ | ------------------- | ----------------- | ----- | --------------------\n';
  for (const r of rows) {
    out += `${String(r.concurrency).padStart(11)} | ${String(r.verdicts).padStart(12)} | ${r.medianPerSecond.toFixed(1).padStart(19)} | ${r.idealPerSecond.toFixed(1).padStart(17)} | ${r.ratio.toFixed(2).padStart(5)} | ${r.meanLatencyMs.toFixed(0).padStart(17)} ms\n`;
  }
  out += `\ncalibration report over ${calibration.labels} labels (${calibration.items} items × ${calibration.criteria} criteria, ${calibration.resamples} resamples): median ${calibration.medianMs.toFixed(0)} ms of ${calibration.ms.length} [${calibration.ms.map((m) => m.toFixed(0)).join(', ')}]\n`;
  if (incomplete > 0) out += `\n${incomplete} verdict(s) came back incomplete: the bench is not measuring valid verdicts\n`;
  process.stdout.write(out);
  process.stdout.write(
    `${JSON.stringify({
      bench: 'judge',
      delayMs: DELAY_MS,
      runs: RUNS,
      cpus: cpus().length,
      loadavg: loadavg(),
      verdicts: rows.map((r) => ({ concurrency: r.concurrency, verdicts: r.verdicts, perSecond: Number(r.medianPerSecond.toFixed(2)), ideal: r.idealPerSecond, ratio: Number(r.ratio.toFixed(3)), meanLatencyMs: Math.round(r.meanLatencyMs), runs: r.runs.map((x) => Number(x.toFixed(2))) })),
      calibration: { labels: calibration.labels, resamples: calibration.resamples, medianMs: Math.round(calibration.medianMs), ms: calibration.ms.map(Math.round) },
      incomplete,
    })}\n`,
  );
  if (incomplete > 0) process.exitCode = 1;
}

await main();
