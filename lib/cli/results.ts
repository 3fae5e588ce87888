import type { Command } from 'commander';
import type { Result, Suite } from '../registry/schemas.ts';
import { formatResultsTable } from './results-table.ts';
import { callForCli, targetOptions, type JsonFlags } from './target.ts';

interface ResultsFlags extends JsonFlags {
  suite?: string;
  checkpoint?: string;
  sweep?: string;
  mode?: string;
  history?: boolean;
  limit?: string;
}

/**
 * `flywheel results`: the registry's results (`GET /v1/results`) as checkpoint × suite, strict beside lenient with
 * their 95% intervals; the newest of each unless `--history`. Without a filter: every suite's.
 */
export function registerResultsCommand(program: Command): void {
  targetOptions(
    program
      .command('results')
      .description('scores per checkpoint × suite, strict beside lenient with 95% intervals (the newest sweep of each; --history: every sweep)')
      .option('--suite <id>', 'only this suite')
      .option('--checkpoint <id>', 'only this checkpoint')
      .option('--sweep <id>', 'only this sweep')
      .option('--mode <mode>', 'only strict or lenient')
      .option('--history', 'one row per sweep, oldest first, instead of the newest')
      .option('--limit <n>', 'at most this many result rows per query (default 1000)')
      .option('--json', 'print the API answer as JSON'),
  ).action(async (flags: ResultsFlags) => {
    const base = new URLSearchParams({ limit: flags.limit ?? '1000' });
    if (flags.mode) base.set('mode', flags.mode);
    const queries: URLSearchParams[] = [];
    if (flags.suite || flags.checkpoint || flags.sweep) {
      const q = new URLSearchParams(base);
      for (const k of ['suite', 'checkpoint', 'sweep'] as const) if (flags[k]) q.set(k, flags[k]);
      queries.push(q);
    } else {
      // No filter: the API wants one, so ask suite by suite.
      const suites = await callForCli<{ items: Array<Omit<Suite, 'taskIds'>> }>({ ...flags, json: false }, 'GET', '/v1/suites');
      if (!suites) return;
      for (const s of suites.items) queries.push(new URLSearchParams({ ...Object.fromEntries(base), suite: s.id }));
    }
    const rows: Result[] = [];
    for (const q of queries) {
      const answer = await callForCli<{ items: Result[] }>({ ...flags, json: false }, 'GET', `/v1/results?${q}`);
      if (!answer) return;
      rows.push(...answer.items);
    }
    if (flags.json) return void process.stdout.write(`${JSON.stringify({ items: rows }, null, 2)}\n`);
    if (rows.length === 0) return void process.stdout.write('no results yet: a sweep writes them (flywheel sweep status <id> --watch follows one)\n');
    process.stdout.write(formatResultsTable(rows, { history: flags.history === true }));
  });
}
