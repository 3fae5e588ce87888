/**
 * `/flywheel …` in words: the commands the research bot knows, parsed from the text Slack sends after the command.
 * Anything else (an unknown word, a missing argument, a request that is not JSON) throws `ValidationError` whose
 * message says what was wrong and shows the usage, which the bot posts back.
 *
 * Slack escapes `&`, `<` and `>` and its clients turn straight quotes into curly ones: both are undone before a JSON
 * request is read.
 *
 * @example
 * parseSlackCommand('compare run-a run-b'); // { kind: 'compare', runA: 'run-a', runB: 'run-b' }
 * parseSlackCommand('train tiny');          // { kind: 'train', preset: 'tiny', request: { base: 'tiny:0', … } }
 */
import { ValidationError } from '../../errors.ts';

export type SlackCommand =
  | { kind: 'help' }
  | { kind: 'status' }
  | { kind: 'compare'; runA: string; runB: string }
  | { kind: 'sweep'; suite: string; checkpoint: string }
  | { kind: 'train'; preset?: string; request: Record<string, unknown> }
  | { kind: 'experiment-start'; experimentId: string };

/** The commands that change something: only the stage's admin users may run them. */
export const SLACK_ADMIN_COMMANDS: ReadonlySet<SlackCommand['kind']> = new Set(['sweep', 'train', 'experiment-start']);

/** Named training requests for `/flywheel train PRESET`; anything else is a JSON request (`POST /v1/training-runs`). */
export const TRAINING_PRESETS: Readonly<Record<string, Record<string, unknown>>> = {
  /** The in-code tiny model on production feedback with training consent: a quick end-to-end check of the loop. */
  tiny: { base: 'tiny:0', dataset: { feedback: {} }, trainer: { steps: 20 } },
};

export const SLACK_USAGE = [
  '*Flywheel in Slack*',
  '`/flywheel compare RUN_A RUN_B`: the two training runs side by side (a chart per shared metric, in a thread)',
  '`/flywheel status`: the loop at a glance',
  '`/flywheel sweep SUITE CHECKPOINT`: start a sweep of a checkpoint over a suite',
  `\`/flywheel train PRESET|JSON\`: start a training run (presets: ${Object.keys(TRAINING_PRESETS).join(', ')}; or the JSON of POST /v1/training-runs)`,
  '`/flywheel experiment start ID`: start a drafted experiment',
  '`/flywheel help`: this',
].join('\n');

/** An id as the registry, training runs and experiments accept them (the use cases check the rest). */
const ID = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,255}$/;

function usageError(problem: string, field: string): ValidationError {
  return new ValidationError(`${problem}\n\n${SLACK_USAGE}`, [{ path: field, message: problem }]);
}

/** Slack's escapes and curly quotes back to what the person typed. */
export function unescapeSlackText(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/[\u201C\u201D]/g, '"')
    .replace(/[\u2018\u2019]/g, "'");
}

function requireId(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw usageError(`missing ${name}`, name);
  if (!ID.test(value)) throw usageError(`${name} ${JSON.stringify(value.slice(0, 80))} is not an id (letters, digits, . _ : @ / -)`, name);
  return value;
}

function exactly(words: string[], count: number, usage: string): void {
  if (words.length > count) throw usageError(`too many words after \`${usage}\`: ${words.slice(count).join(' ').slice(0, 80)}`, 'text');
}

/**
 * @example
 * parseSlackCommand('experiment start exp-7'); // { kind: 'experiment-start', experimentId: 'exp-7' }
 * parseSlackCommand('deploy');                  // throws ValidationError: unknown command "deploy" + usage
 */
export function parseSlackCommand(rawText: string): SlackCommand {
  const text = unescapeSlackText(rawText).trim();
  const [verb = '', ...rest] = text.split(/\s+/).filter((w) => w !== '');
  switch (verb.toLowerCase()) {
    case '':
    case 'help':
      return { kind: 'help' };
    case 'status':
      exactly(rest, 0, 'status');
      return { kind: 'status' };
    case 'compare': {
      const runA = requireId(rest[0], 'RUN_A');
      const runB = requireId(rest[1], 'RUN_B');
      exactly(rest, 2, 'compare RUN_A RUN_B');
      if (runA === runB) throw usageError('compare needs two different runs', 'RUN_B');
      return { kind: 'compare', runA, runB };
    }
    case 'sweep': {
      const suite = requireId(rest[0], 'SUITE');
      const checkpoint = requireId(rest[1], 'CHECKPOINT');
      exactly(rest, 2, 'sweep SUITE CHECKPOINT');
      return { kind: 'sweep', suite, checkpoint };
    }
    case 'train': {
      const arg = text.slice(text.toLowerCase().indexOf('train') + 'train'.length).trim();
      if (arg === '') throw usageError('missing PRESET or JSON', 'PRESET');
      const preset = TRAINING_PRESETS[arg];
      if (preset) return { kind: 'train', preset: arg, request: structuredClone(preset) };
      if (!arg.startsWith('{')) throw usageError(`unknown preset ${JSON.stringify(arg.slice(0, 80))} (and not a JSON object)`, 'PRESET');
      let request: unknown;
      try {
        request = JSON.parse(arg);
      } catch (error) {
        throw usageError(`the training request is not JSON: ${(error as Error).message}`, 'JSON');
      }
      if (typeof request !== 'object' || request === null || Array.isArray(request)) throw usageError('the training request must be a JSON object', 'JSON');
      return { kind: 'train', request: request as Record<string, unknown> };
    }
    case 'experiment': {
      const sub = rest[0]?.toLowerCase();
      if (sub !== 'start') throw usageError(sub ? `unknown experiment command ${JSON.stringify(sub.slice(0, 40))} (start is the one)` : 'missing `start ID`', 'text');
      const experimentId = requireId(rest[1], 'ID');
      exactly(rest, 2, 'experiment start ID');
      return { kind: 'experiment-start', experimentId };
    }
    default:
      throw usageError(`unknown command ${JSON.stringify(verb.slice(0, 40))}`, 'text');
  }
}
