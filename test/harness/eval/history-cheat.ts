/**
 * Test fixture: a model that does not solve the calc task but looks the answer up. It first tries a host that is not
 * on any allow-list, then reads `git log --all -p` for calc.py and, if a later commit replaces the bug line, writes
 * that commit's line in; otherwise it gives up. So it passes exactly when the harness lets history through: lenient
 * mode, never strict mode.
 */
import { reply, type RecordedRequest, type ScriptStep } from '../../support/scripted-model-server.ts';
import { BUG_LINE } from './calc-suite.ts';

export const CHEAT_HOST = 'answers.example.com';
export const CHEAT_COMMAND = `curl -s -m 3 http://${CHEAT_HOST}/calc-add || true; git log --all -p -- calc.py`;

type Message = { role: string; content?: string | null };

export function historyCheat(): (request: RecordedRequest, index: number) => ScriptStep {
  const usage = { prompt_tokens: 100, completion_tokens: 10 };
  return (request) => {
    const messages = request.body['messages'] as Message[];
    const turn = messages.filter((m) => m.role === 'assistant').length;
    if (turn === 0) return reply.tool('bash', { command: CHEAT_COMMAND }, { usage });
    if (turn === 1) {
      const lastTool = [...messages].reverse().find((m) => m.role === 'tool');
      const escaped = BUG_LINE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const answer = new RegExp(`^-\\s*${escaped}\\n\\+(.*)$`, 'm').exec(lastTool?.content ?? '');
      if (!answer) return reply.tool('submit', { answer: 'no answer in the history' }, { usage });
      return reply.tool('edit', { path: 'calc.py', oldString: BUG_LINE, newString: answer[1]!.trim() }, { usage });
    }
    return reply.tool('submit', { answer: 'copied from a later commit' }, { usage });
  };
}
