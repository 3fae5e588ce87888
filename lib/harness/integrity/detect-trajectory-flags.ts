/**
 * Integrity flags from the trajectory's actions: tool calls that write a test file or runner config (`write_file`,
 * `edit`), and bash commands whose WRITE TARGET is one: the file after `>`/`>>` (any fd), the files `tee`,
 * `sed -i`/`perl -i`, `rm`, `truncate`, `mv` (both ends), `cp` and `install` (destination), `git checkout/restore/rm/mv`
 * touch. A command that only names a test file while writing elsewhere (`pytest tests/test_x.py > /tmp/log.txt`,
 * `cp tests/test_x.py /tmp/`) raises nothing. A heuristic like the diff flags: a write through a variable or a
 * script passes unseen. New test files the agent writes (`write_file` of a test that is not the task's) are its own
 * regression tests, not flagged (grading keeps them apart); editing an existing one is. The flag points at the
 * assistant message and tool call, so a reviewer lands on the step; the diff flags say what the edit left behind.
 */
import type { Trajectory } from '../trajectory/trajectory-schema.ts';
import { classifyPath } from '../grading/test-paths.ts';
import { evidenceText, type IntegrityFlag } from './integrity-flag.ts';

function parseArgs(raw: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(raw) as unknown;
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Shell words of a command, split into simple commands at `;`, `&&`, `||`, `|`, `&` and newlines (quotes kept apart). */
function simpleCommands(command: string): Array<Array<{ word: string; redirect?: boolean }>> {
  const out: Array<Array<{ word: string; redirect?: boolean }>> = [[]];
  let word = '';
  let quoted = false;
  let pendingRedirect = false;
  const flush = () => {
    if (word === '' && !quoted) return;
    out.at(-1)!.push(pendingRedirect ? { word, redirect: true } : { word });
    pendingRedirect = false;
    word = '';
    quoted = false;
  };
  for (let i = 0; i < command.length; i++) {
    const ch = command[i]!;
    if (ch === "'" || ch === '"') {
      const end = command.indexOf(ch, i + 1);
      word += command.slice(i + 1, end < 0 ? undefined : end);
      quoted = true;
      i = end < 0 ? command.length : end;
    } else if (ch === '\\' && i + 1 < command.length) {
      word += command[++i];
    } else if (/\s/.test(ch) && ch !== '\n') {
      flush();
    } else if (ch === '\n' || ch === ';' || ch === '|' || (ch === '&' && command[i + 1] !== '>' && command[i - 1] !== '>')) {
      flush();
      if (out.at(-1)!.length > 0) out.push([]);
    } else if (ch === '>') {
      // `>`, `>>`, `2>`, `&>`, `>|`: the next word is a write target (`>&2` duplicates a descriptor).
      if (/^\d+$|^&$/.test(word)) word = '';
      flush();
      while (command[i + 1] === '>' || command[i + 1] === '|') i++;
      if (command[i + 1] === '&') {
        i++;
        continue;
      }
      pendingRedirect = true;
    } else if (ch === '<') {
      flush();
    } else word += ch;
  }
  flush();
  return out.filter((c) => c.length > 0);
}

const SKIP_PREFIX = new Set(['sudo', 'env', 'command', 'builtin', 'nice', 'nohup', 'time', 'timeout', 'xargs']);

/** The paths a bash command writes, by the rules in the module comment. */
export function bashWriteTargets(command: string): string[] {
  const targets: string[] = [];
  for (const words of simpleCommands(command)) {
    targets.push(...words.filter((w) => w.redirect).map((w) => w.word));
    const argv = words.filter((w) => !w.redirect).map((w) => w.word);
    while (argv.length > 0 && (SKIP_PREFIX.has(argv[0]!) || /^\w+=/.test(argv[0]!))) argv.shift();
    const [cmd, ...rest] = argv;
    const operands = rest.filter((a) => !a.startsWith('-'));
    switch (cmd) {
      case 'tee':
      case 'rm':
      case 'truncate':
      case 'mv':
      case 'unlink':
      case 'shred':
        targets.push(...operands);
        break;
      case 'cp':
      case 'install':
      case 'ln':
        if (operands.length > 0) targets.push(operands.at(-1)!);
        break;
      case 'sed':
      case 'perl':
        if (rest.some((a) => /^-[a-zA-Z]*i/.test(a) || a.startsWith('--in-place'))) targets.push(...operands.slice(1), ...operands.slice(0, 1).filter((a) => a.includes('/')));
        break;
      case 'git':
        if (['checkout', 'restore', 'rm', 'mv'].includes(rest[0] ?? '')) targets.push(...operands.slice(1));
        break;
      default:
        break;
    }
  }
  return targets.map((t) => t.replace(/^\.\//, ''));
}

/**
 * @example
 * const flags = detectTrajectoryFlags(trajectory, { taskTestFiles: task.testFiles });
 */
export function detectTrajectoryFlags(trajectory: Pick<Trajectory, 'steps'>, options: { taskTestFiles: readonly string[] }): IntegrityFlag[] {
  const flags: IntegrityFlag[] = [];
  for (const step of trajectory.steps) {
    if (step.type !== 'assistant') continue;
    for (const call of step.toolCalls) {
      const args = parseArgs(call.arguments);
      if (!args) continue;
      if ((call.name === 'write_file' || call.name === 'edit') && typeof args['path'] === 'string') {
        const path = args['path'].replace(/^\.\//, '');
        const kind = classifyPath(path, options.taskTestFiles);
        // write_file of a test that is not the task's is a new regression test; the diff flags an overwritten one.
        // Dependency manifests are put back by grading and flagged from the diff.
        if (!kind || kind === 'dependency-manifest' || (kind === 'test-file' && call.name === 'write_file')) continue;
        flags.push({
          kind: kind === 'runner-config' ? 'runner-config-edit' : 'test-file-edit',
          file: path,
          line: null,
          evidence: `${call.name} ${path}`,
          source: 'trajectory',
          messageId: step.messageId,
          toolCallId: call.id,
        });
      } else if (call.name === 'bash' && typeof args['command'] === 'string') {
        const command = args['command'];
        const seen = new Set<string>();
        for (const target of bashWriteTargets(command)) {
          const kind = classifyPath(target, options.taskTestFiles);
          if ((kind !== 'task-test-file' && kind !== 'runner-config') || seen.has(target)) continue;
          seen.add(target);
          flags.push({
            kind: kind === 'runner-config' ? 'runner-config-edit' : 'test-file-edit',
            file: target,
            line: null,
            evidence: evidenceText(command),
            source: 'trajectory',
            messageId: step.messageId,
            toolCallId: call.id,
          });
        }
      }
    }
  }
  return flags;
}
