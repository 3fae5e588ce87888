/**
 * Integrity flags from the trajectory's actions: tool calls that write a test file or runner config (`write_file`,
 * `edit`), and bash commands that name one of the task's test files together with a writing operation (redirect,
 * `sed -i`, `rm`, `mv`, `cp`, `tee`, `truncate`, `git checkout`). A heuristic like the diff flags: a command that
 * writes through a variable or a script passes unseen. The flag points at the assistant message and tool call, so
 * a reviewer lands on the step; the diff flags say what the edit left behind.
 */
import type { Trajectory } from '../trajectory/trajectory-schema.ts';
import { classifyPath } from '../grading/test-paths.ts';
import { evidenceText, type IntegrityFlag } from './integrity-flag.ts';

const WRITING = /(?:^|[\s;&|])(?:>>?|sed\s+(?:-\w*\s+)*-i|perl\s+(?:-\w*\s+)*-i|rm|mv|cp|tee|truncate|git\s+(?:checkout|restore|rm|mv|apply))(?=[\s;&|]|$)/;

function parseArgs(raw: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(raw) as unknown;
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
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
        if (!kind) continue;
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
        if (!WRITING.test(command)) continue;
        for (const file of options.taskTestFiles) {
          if (!command.includes(file)) continue;
          flags.push({ kind: 'test-file-edit', file, line: null, evidence: evidenceText(command), source: 'trajectory', messageId: step.messageId, toolCallId: call.id });
        }
      }
    }
  }
  return flags;
}
