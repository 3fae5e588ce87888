/**
 * `flywheel reward-spec set|show`: a suite's reward specification (`lib/judges/reward-spec.ts`): the weights of its
 * tests and rubric criteria, the penalties of integrity flags, and the judge whose verdicts count. Stored in the local
 * data folder's records or, with `--table`, the stage's records table.
 *
 * @example
 * flywheel reward-spec set behaviour-py --tests 1 --criterion asks-first=2 --penalty test-file-edit=0.5 --judge rubric-judge
 * flywheel reward-spec show behaviour-py --json
 */
import type { Command } from 'commander';
import { ValidationError } from '../errors.ts';
import { getRewardSpec, parseRewardSpec, putRewardSpec, REWARD_RANGE, type RewardSpec } from '../judges/reward-spec.ts';
import { openRecordsStore, recordsStoreOptions, type RecordsStoreFlags } from './records-store.ts';
import { collect } from './target.ts';

/** `id=weight` pairs → an object; a malformed pair is a ValidationError naming the option. */
export function parsePairs(pairs: readonly string[], option: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const pair of pairs) {
    const eq = pair.lastIndexOf('=');
    const value = Number(pair.slice(eq + 1));
    if (eq <= 0 || pair.slice(eq + 1).trim() === '' || !Number.isFinite(value)) {
      throw new ValidationError(`--${option} ${pair}: want <id>=<number>`, [{ path: option, message: `${pair} is not <id>=<number>` }]);
    }
    out[pair.slice(0, eq)] = value;
  }
  return out;
}

/** A spec as people read it. */
export function formatRewardSpec(spec: RewardSpec): string {
  const lines = [
    `reward spec of ${spec.suite} (reward in [${REWARD_RANGE.min}, ${REWARD_RANGE.max}]: weighted mean of tests and criteria, minus penalties)`,
    `  tests: weight ${spec.tests}`,
    ...Object.entries(spec.criteria).map(([id, w]) => `  criterion ${id}: weight ${w}`),
    ...Object.entries(spec.integrityPenalties).map(([kind, p]) => `  penalty ${kind}: ${p}`),
    `  judge: ${spec.judge ?? '(any)'}`,
    ...(spec.updatedAt ? [`  updated ${spec.updatedAt}${spec.updatedBy ? ` by ${spec.updatedBy}` : ''}`] : []),
  ];
  return `${lines.join('\n')}\n`;
}

export function registerRewardSpecCommands(program: Command): void {
  const group = program.command('reward-spec').description("a suite's reward for training: weights of tests and rubric criteria, penalties of integrity flags");
  recordsStoreOptions(
    group
      .command('set <suite>')
      .description('set (replace) the reward spec of a suite')
      .option('--tests <weight>', 'weight of the tests verdict (default 1; 0: tests do not count)')
      .option('--criterion <id=weight>', 'weight of a rubric criterion (repeatable)', collect, [])
      .option('--penalty <flag=penalty>', 'penalty in [0, 1] of an integrity flag kind, or integrity-failure (repeatable)', collect, [])
      .option('--judge <ref>', 'the judge whose verdicts count (name or name@version)')
      .option('--by <who>', 'who sets it')
      .option('--json', 'print JSON'),
  ).action(async (suite: string, flags: RecordsStoreFlags & { tests?: string; criterion: string[]; penalty: string[]; judge?: string; by?: string; json?: boolean }) => {
    const spec = parseRewardSpec({
      suite,
      ...(flags.tests !== undefined ? { tests: Number(flags.tests) } : {}),
      criteria: parsePairs(flags.criterion, 'criterion'),
      integrityPenalties: parsePairs(flags.penalty, 'penalty'),
      ...(flags.judge ? { judge: flags.judge } : {}),
    });
    const store = openRecordsStore(flags);
    try {
      const stored = await putRewardSpec({ records: store.records, now: () => new Date() }, spec, flags.by);
      process.stdout.write(flags.json ? `${JSON.stringify(stored, null, 2)}\n` : formatRewardSpec(stored));
    } finally {
      store.close();
    }
  });
  recordsStoreOptions(group.command('show <suite>').description('show the reward spec of a suite').option('--json', 'print JSON')).action(async (suite: string, flags: RecordsStoreFlags & { json?: boolean }) => {
    const store = openRecordsStore(flags);
    try {
      const spec = await getRewardSpec({ records: store.records }, suite);
      if (!spec) {
        process.stderr.write(`no reward spec for suite ${suite} (set one with \`flywheel reward-spec set ${suite} …\`)\n`);
        process.exitCode = 1;
        return;
      }
      process.stdout.write(flags.json ? `${JSON.stringify(spec, null, 2)}\n` : formatRewardSpec(spec));
    } finally {
      store.close();
    }
  });
}
