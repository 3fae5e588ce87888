/**
 * The per-file filter command derived from the test command itself, so the fast first pass and the fast oracle run
 * exactly as the suite does: same `cd dir &&` prefix and steps before the runner, same env assignments
 * (`PYTHONPATH=src`), same interpreter and options — only the positional test paths are replaced by `{files}`
 * (`{dirs}` for go, which takes packages, not files).
 */
import type { RunnerKind } from '../schemas.ts';
import { readInvocation } from './runner-invocation.ts';

/**
 * The filter command for a test command, or undefined when the command cannot be taken apart safely (a pipe, `;`,
 * `||`, a subshell) or does not run a runner of this kind.
 *
 * @example
 * deriveFilterCommand('PYTHONPATH=src python3 -m pytest -q tests', 'pytest'); // 'PYTHONPATH=src python3 -m pytest -q {files}'
 * deriveFilterCommand('go test -json ./... > "$FLYWHEEL_REPORT_DIR/go.json"', 'go'); // 'go test -json {dirs} > "$FLYWHEEL_REPORT_DIR/go.json"'
 */
export function deriveFilterCommand(testCommand: string, kind: RunnerKind): string | undefined {
  if (kind === 'other') return undefined;
  const inv = readInvocation(testCommand, kind);
  if (!inv || inv.kind !== kind) return undefined;
  // jest reads positional paths as regular expressions: `app/(group)/[id]/page.test.ts` would match nothing.
  const placeholder = kind === 'go' ? '{dirs}' : kind === 'jest' ? '--runTestsByPath {files}' : '{files}';
  const kept = [inv.runnerWord, ...(inv.subcommand ? [inv.subcommand] : []), ...inv.options];
  const insertAt = Math.max(...kept.map((w) => w.end));
  const insertion = inv.needsDoubleDash ? ` -- ${placeholder}` : ` ${placeholder}`;
  type Edit = { start: number; end: number; text: string };
  const edits: Edit[] = [{ start: insertAt, end: insertAt, text: insertion }];
  for (const p of inv.positionals) {
    let start = p.start;
    while (start > 0 && (testCommand[start - 1] === ' ' || testCommand[start - 1] === '\t')) start--;
    edits.push({ start, end: p.end, text: '' });
  }
  // Right to left, so earlier offsets stay valid; at one offset the deletion goes first (it must not take the insertion).
  edits.sort((a, b) => b.start - a.start || (a.text ? 1 : -1));
  let out = testCommand;
  for (const e of edits) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}
