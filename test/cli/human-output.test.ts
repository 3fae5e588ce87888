/**
 * The CLI's human output, as pure functions: numbers rounded, values as plain text (never JSON), tables that fit the
 * terminal and keep a cell's lines in it, errors that name the flag, the start banner's commands, the shard progress
 * `sweep status --watch` draws, and the scripted model the walk-through uses.
 */
import { Command } from 'commander';
import { describe, expect, it, vi } from 'vitest';
import { HumanLogger, humanLogLine } from '../../lib/cli/human-logger.ts';
import { checkpointBody, formatRegistered } from '../../lib/cli/checkpoint.ts';
import { cellText, fieldLines, formatNumber, formatPercent, formatPercentInterval } from '../../lib/cli/format.ts';
import { buildProgram, cliVersion } from '../../lib/cli/program.ts';
import { formatResultsTable, newestResults } from '../../lib/cli/results-table.ts';
import { ScriptedModelScript, scriptedCompletion } from '../../lib/cli/scripted-model.ts';
import { startBanner } from '../../lib/cli/start.ts';
import { formatElapsed, formatSweepProgress, nextPollMs, shardChangeLines, sweepEnded, sweepFailed } from '../../lib/cli/sweep-progress.ts';
import { table, tableWidth, wrapLine } from '../../lib/cli/table.ts';
import { errorLines, fieldFlags, flagForField } from '../../lib/cli/target.ts';
import type { Result } from '../../lib/registry/schemas.ts';
import type { SweepReport } from '../../lib/sweeps/schemas.ts';
import type { SweepProgress } from '../../lib/sweeps/sweep-progress-schema.ts';

const result = (over: Partial<Result>): Result => ({
  sweepId: 's1',
  checkpoint: 'ck-1',
  suite: 'smoke',
  suiteVersion: 1,
  mode: 'strict',
  score: 2 / 3,
  n: 3,
  tasks: 3,
  attempts: 3,
  passes: 2,
  ungraded: 0,
  infrastructureErrors: 0,
  ci: { low: 0.2077, high: 0.9386 },
  shards: 1,
  shardsAggregated: 1,
  shardsFailed: 0,
  attemptsKeys: [],
  at: '2026-12-02T10:00:00.000Z',
  updatedAt: '2026-12-02T10:00:00.000Z',
  ...over,
});

describe('numbers and values', () => {
  it('rounds to at most 3 decimals (3 significant digits below 1) and writes percentages with one', () => {
    expect(formatNumber(2 / 3)).toBe('0.667');
    expect(formatNumber(12.30001)).toBe('12.3');
    expect(formatNumber(1234.56789)).toBe('1234.568');
    expect(formatNumber(0.0001234)).toBe('0.000123');
    expect(formatNumber(42)).toBe('42');
    expect(formatPercent(2 / 3)).toBe('66.7%');
    expect(formatPercent(1)).toBe('100.0%');
    expect(formatPercentInterval(0.5, 0.2, 0.8)).toBe('50.0% [20.0–80.0]');
    expect(formatPercentInterval(0.5)).toBe('50.0%');
  });

  it('writes lists and objects as plain text, never JSON', () => {
    const text = cellText({ repo: 'acme/app', tools: ['bash', 'edit'], limits: { turns: 6, ratio: 1 / 3 }, none: null });
    expect(text).toBe('repo=acme/app, tools=bash edit, limits.turns=6, limits.ratio=0.333, none=');
    expect(cellText([{ a: 1 }, 'x'])).toBe('(a=1), x');
    expect(cellText(undefined)).toBe('');
    for (const v of [{ a: { b: [1, { c: 2 }] } }, [[1, 2], { d: 'e' }]]) expect(cellText(v)).not.toMatch(/[{}"[\]]/);
    expect(fieldLines([['id', 'ck-1'], ['empty', ''], ['note', 'two\nlines']])).toBe('id    ck-1\nnote  two\n      lines\n');
  });
});

describe('table', () => {
  it('fits the width: text wraps at spaces, an id stays whole, a cell keeps its own lines', () => {
    const id = 'b3251c0d-2b3d-4652-bdb4-72a8fb0838b8';
    const out = table(['id', 'comment', 'n'], [[id, 'the diff was wrong and it also removed a test\nsecond line', '1']], { width: 60 });
    const lines = out.trimEnd().split('\n');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(60);
    expect(lines[2]).toContain(id);
    expect(out).toContain('second line');
    // The comment's words are all there, over several lines of its column.
    expect(lines.slice(2).join(' ').replace(/\s+/g, ' ')).toContain('the diff was');
    expect(lines.length).toBeGreaterThan(4);
    // The rule under the header is as wide as each column.
    expect(lines[1]).toMatch(/^-{36} {2}-+ {2}-$/);
  });

  it('breaks words only when every column is down to its longest word', () => {
    const out = table(['a', 'b'], [['x'.repeat(50), 'y'.repeat(50)]], { width: 40 });
    for (const l of out.trimEnd().split('\n')) expect(l.length).toBeLessThanOrEqual(40);
    expect(out.replace(/[\s-]/g, '')).toContain('ab');
    expect(wrapLine('aaa bbb ccc', 7)).toEqual(['aaa bbb', 'ccc']);
    expect(wrapLine('abcdefghij', 4)).toEqual(['abcd', 'efgh', 'ij']);
  });

  it('is as wide as the terminal (100 when it says nothing), as COLUMNS when piped, else one line per row', () => {
    expect(tableWidth({ isTTY: true, columns: 80 }, {})).toBe(80);
    expect(tableWidth({ isTTY: true }, {})).toBe(100);
    expect(tableWidth({ isTTY: false }, { COLUMNS: '72' })).toBe(72);
    expect(tableWidth({ isTTY: false }, {})).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('errors name the flag', () => {
  it('maps field paths to the flags that set them: by name, by the fieldFlags map, list indexes dropped', () => {
    const program = new Command('flywheel');
    const start = program.command('start').option('--sweep-id <id>').option('--suite <id>').option('--attempts <n>').option('--trace-id <id>');
    fieldFlags(start, { suites: '--suite', attemptsPerTask: '--attempts' });
    expect(flagForField('suites[1]', start)).toBe('--suite');
    expect(flagForField('attemptsPerTask', start)).toBe('--attempts');
    expect(flagForField('traceId', start)).toBe('--trace-id');
    expect(flagForField('sweepId', start)).toBe('--sweep-id');
    expect(flagForField('tasks.path', start)).toBeUndefined();
    const lines = errorLines(
      {
        error: 'Flywheel.ValidationError',
        message: 'Invalid sweep: suites[0]: no suite nope is registered; traceId: Invalid input: expected string, received undefined',
        issues: [
          { path: 'suites[0]', message: 'no suite nope is registered' },
          { path: 'traceId', message: 'Invalid input: expected string, received undefined' },
          { path: 'tasks.path', message: 'required' },
        ],
      },
      400,
      start,
    );
    expect(lines).toEqual(['Flywheel.ValidationError: Invalid sweep:', '  --suite: no suite nope is registered', '  --trace-id: required', '  tasks.path: required']);
    expect(errorLines('<html>bad gateway</html>', 502, null)).toEqual(['HTTP 502: <html>bad gateway</html>']);
  });
});

describe('checkpoint register', () => {
  it('builds the body from the flags and prints the sweep it started with the command that follows it', () => {
    const flags = { model: 'coder', serve: 'openai:ck@http://127.0.0.1:9/v1', sweep: true, meta: ['lr=0.1', 'note=first'] };
    expect(checkpointBody('ck-1', flags)).toEqual({ id: 'ck-1', model: 'coder', serving: { kind: 'endpoint', model: flags.serve }, sweep: true, metadata: { lr: 0.1, note: 'first' } });
    expect(() => checkpointBody('ck-1', { ...flags, vllm: true })).toThrow(/not both/);
    const printed = formatRegistered(
      { checkpoint: { id: 'ck-1', model: 'coder', serving: { kind: 'endpoint', model: flags.serve }, status: 'active', metadata: {}, registeredAt: '2026-12-02T10:00:00Z' }, created: true, sweeps: [{ sweepId: 'checkpoint-ck-1-abcd1234', suites: ['a', 'b'] }] },
      ' --data-dir /tmp/x',
    );
    expect(printed).toBe('registered ck-1 (model coder)\nsweep checkpoint-ck-1-abcd1234 started on 2 suite(s): a, b\nfollow it: flywheel sweep status checkpoint-ck-1-abcd1234 --watch --data-dir /tmp/x\n');
  });
});

describe('results', () => {
  it('puts strict beside lenient with intervals, newest sweep of each checkpoint × suite', () => {
    const rows = [
      result({ sweepId: 'old', score: 0.1, at: '2026-12-01T10:00:00.000Z' }),
      result({}),
      result({ mode: 'lenient', score: 1, ci: { low: 0.4385, high: 1 } }),
      result({ checkpoint: 'ck-2', score: null, ci: null, n: 0 }),
    ];
    expect(newestResults(rows)).toHaveLength(3);
    const lines = formatResultsTable(rows).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^checkpoint\s+suite\s+strict\s+lenient\s+tasks\s+sweep\s+at$/);
    expect(lines[2]).toMatch(/^ck-1\s+smoke\s+66\.7% \[20\.8–93\.9\]\s+100\.0% \[43\.9–100\.0\]\s+3\/3\s+s1\s+2026-12-02T10:00:00Z$/);
    expect(lines[3]).toMatch(/^ck-2\s+smoke\s+-\s+0\/3\s+s1/);
    expect(formatResultsTable(rows, { history: true })).toContain('old');
  });
});

describe('sweep status --watch', () => {
  const report = (status: SweepReport['sweep']['status'], execution?: string): SweepReport => ({
    sweep: { sweepId: 'sw', status, trigger: 'checkpoint', requestedAt: '2026-12-02T10:00:00Z', checkpoints: ['ck-1'], suites: [{ id: 'smoke', version: 1 }], modes: ['strict'], shardCount: 2 },
    ...(execution ? { execution: { executionId: 'x', status: execution } } : {}),
    failedShards: [],
    results: [],
    comparisons: [],
    saturated: [],
  });
  const progress: SweepProgress = {
    sweepId: 'sw',
    planned: true,
    shards: [
      { shardId: 'c0-s0-strict-0', checkpoint: 'ck-1', suite: 'smoke', mode: 'strict', status: 'running', done: 3, total: 6, tasks: 6, elapsedSeconds: 65 },
      { shardId: 'c0-s0-strict-1', checkpoint: 'ck-1', suite: 'smoke', mode: 'strict', status: 'failed', done: 1, total: 6, tasks: 6, error: 'States.TaskFailed: exit 3' },
    ],
  };

  it('draws each shard with its status, tasks done of total and elapsed time', () => {
    const text = formatSweepProgress(report('planned'), progress);
    expect(text).toContain('sweep sw: planned; shards 1/2 done; results 0');
    expect(text).toMatch(/c0-s0-strict-0\s+ck-1\s+smoke\s+strict\s+running\s+#####\.\.\.\.\. 3\/6\s+1m 05s/);
    expect(text).toContain('c0-s0-strict-1: States.TaskFailed: exit 3');
    expect(formatSweepProgress(report('requested'), { sweepId: 'sw', planned: false, shards: [] })).toContain('not planned yet');
    expect(formatElapsed(3725)).toBe('1h 02m');
  });

  it('prints a plain line per shard change, backs off while nothing changes, and knows when it ended and how', () => {
    const seen = new Map<string, string>();
    expect(shardChangeLines(seen, progress)).toHaveLength(2);
    expect(shardChangeLines(seen, progress)).toEqual([]);
    expect(nextPollMs(500, false)).toBe(750);
    expect(nextPollMs(4000, false)).toBe(5000);
    expect(nextPollMs(5000, true)).toBe(500);
    expect(sweepEnded(report('planned'))).toBe(false);
    expect(sweepEnded(report('planned', 'RUNNING'))).toBe(false);
    expect([sweepEnded(report('succeeded')), sweepFailed(report('succeeded'))]).toEqual([true, false]);
    expect([sweepEnded(report('partial')), sweepFailed(report('partial'))]).toEqual([true, true]);
    // A request validation refused: no sweep record, the execution failed.
    expect([sweepEnded(report('requested', 'FAILED')), sweepFailed(report('requested', 'FAILED'))]).toEqual([true, true]);
  });
});

describe('start banner and version', () => {
  it('prints commands that reach the runtime: --data-dir only when it is not the default folder', () => {
    const custom = startBanner({ url: 'http://127.0.0.1:4010', dataDir: '/tmp/fw data', apiKey: 'fwlocal_k' });
    const commands = custom.split('\n').filter((l) => l.includes('npm run flywheel --'));
    expect(commands.length).toBeGreaterThan(2);
    for (const c of commands) expect(c).toContain("--data-dir '/tmp/fw data'");
    expect(custom).toContain('console:  http://127.0.0.1:4010/');
    expect(custom).not.toMatch(/[{}]/);
    const plain = startBanner({ url: 'http://127.0.0.1:4010', dataDir: '.flywheel', apiKey: 'fwlocal_k' });
    expect(plain).not.toContain('--data-dir');
    expect(plain).toContain('npm run flywheel -- feedback list\n');
  });

  it('logs lines for a person at a terminal, not JSON', () => {
    expect(humanLogLine({ level: 'INFO', message: 'local runtime ready', timestamp: '2026-12-04T08:26:25.920Z', service: 'flywheel-local', sampling_rate: 0, url: 'http://127.0.0.1:4010', maxReceiveCount: 5 })).toBe(
      '08:26:25 INFO local runtime ready url=http://127.0.0.1:4010, maxReceiveCount=5',
    );
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      new HumanLogger({ serviceName: 'flywheel-local', logLevel: 'INFO' }).warn('sweep refused', { sweepId: 'nightly-1', issues: [{ path: 'suites', message: 'none active' }] });
    } finally {
      spy.mockRestore();
    }
    expect(written.join('')).toMatch(/^\d\d:\d\d:\d\d WARN sweep refused sweepId=nightly-1, issues=\(path=suites, message=none active\)\n$/);
  });

  it('--version is the package version, and a command keeps its own --version', async () => {
    expect(cliVersion()).toMatch(/^\d+\.\d+\.\d+/);
    const program = buildProgram();
    expect(program.version()).toBe(cliVersion());
    const calibrate = program.commands.find((c) => c.name() === 'annotate')!.commands.find((c) => c.name() === 'calibrate')!;
    let seen: unknown;
    calibrate.action((_judge: string, flags: { version?: string }) => {
      seen = flags.version;
    });
    await program.parseAsync(['node', 'flywheel', 'annotate', 'calibrate', 'j', '--gold-set', 'g', '--version', 'v3']);
    expect(seen).toBe('v3');
  });
});

describe('scripted model', () => {
  it('answers each turn of a scripted task with its step, and a plain text to anything else', () => {
    const script = ScriptedModelScript.parse({ tasks: [{ when: 'add()', steps: [{ tool: 'read_file', arguments: { path: 'calc.py' } }, { text: 'done' }] }] });
    const first = scriptedCompletion(script, { messages: [{ role: 'user', content: 'add() is broken' }] }) as any;
    expect(first.choices[0].message.tool_calls[0].function).toEqual({ name: 'read_file', arguments: '{"path":"calc.py"}' });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const later = scriptedCompletion(script, { messages: [{ role: 'user', content: [{ type: 'text', text: 'add() is broken' }] }, { role: 'assistant', content: null }, { role: 'assistant' }, { role: 'assistant' }] }) as any;
    expect(later.choices[0].message.content).toBe('done');
    const other = scriptedCompletion(script, { messages: [{ role: 'user', content: 'something else' }] }) as any;
    expect(other.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: expect.stringContaining('no script') } });
  });
});
