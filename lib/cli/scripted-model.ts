import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import { z } from 'zod';

/**
 * A scripted model behind the OpenAI chat-completions protocol (`POST /v1/chat/completions`), for trying Flywheel
 * without a GPU or a key: `flywheel model serve-scripted --script examples/quickstart/script.json`. Each scripted task
 * names a phrase of its instruction (`when`) and the steps the agent takes, one per turn (the request's assistant
 * messages count the turns); a request no task matches gets a plain answer that ends the attempt. Deterministic, so a
 * walk-through's results are the same every time.
 */
export const ScriptedModelScript = z
  .object({
    tasks: z
      .array(
        z.object({
          when: z.string().min(1),
          steps: z
            .array(z.union([z.object({ tool: z.string().min(1), arguments: z.record(z.string(), z.unknown()) }).strict(), z.object({ text: z.string() }).strict()]))
            .min(1),
        }),
      )
      .min(1),
  })
  .strict();
export type ScriptedModelScript = z.infer<typeof ScriptedModelScript>;

/** A request message as the OpenAI protocol carries it (content: a string or text parts). */
interface ChatMessage {
  role: string;
  content?: string | Array<{ type?: string; text?: string }> | null;
}

function textOf(m: ChatMessage): string {
  if (typeof m.content === 'string') return m.content;
  return Array.isArray(m.content) ? m.content.map((p) => p.text ?? '').join('\n') : '';
}

/**
 * The chat completion the script answers to one request (the OpenAI response body).
 *
 * @example
 * scriptedCompletion(script, { messages: [{ role: 'user', content: 'add() in calc.py …' }] }).choices[0].message.tool_calls;
 */
export function scriptedCompletion(script: ScriptedModelScript, body: { model?: unknown; messages?: ChatMessage[] }, n = 0): Record<string, unknown> {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const prompt = messages.filter((m) => m.role === 'user' || m.role === 'system').map(textOf).join('\n');
  const task = script.tasks.find((t) => prompt.includes(t.when));
  const turn = messages.filter((m) => m.role === 'assistant').length;
  const step = task ? task.steps[Math.min(turn, task.steps.length - 1)]! : { text: 'This scripted model has no script for this task.' };
  const message =
    'tool' in step
      ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${n}_${turn}`, type: 'function', function: { name: step.tool, arguments: JSON.stringify(step.arguments) } }] }
      : { role: 'assistant', content: step.text };
  return {
    id: `chatcmpl-scripted-${n}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof body.model === 'string' ? body.model : 'scripted',
    choices: [{ index: 0, message, finish_reason: 'tool' in step ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: Math.ceil(prompt.length / 4), completion_tokens: 10, total_tokens: Math.ceil(prompt.length / 4) + 10 },
  };
}

/** A request's whole body, as UTF-8 text (the scripted model's and the tests' stand-in servers read it so). */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Serves the script on `host:port` (0 = a free port); answers with the server and its base URL (`…/v1`).
 *
 * @example
 * const { baseUrl, server } = await serveScriptedModel(script, { port: 0 });
 */
export async function serveScriptedModel(script: ScriptedModelScript, options: { port: number; host?: string }): Promise<{ server: Server; baseUrl: string }> {
  let n = 0;
  const server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'GET' && req.url === '/v1/models') return send(200, { object: 'list', data: [{ id: 'scripted', object: 'model' }] });
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return send(404, { error: { message: `no route ${req.method} ${req.url}` } });
    let body: { model?: unknown; messages?: ChatMessage[] };
    try {
      body = JSON.parse(await readBody(req)) as typeof body;
    } catch {
      return send(400, { error: { message: 'the body is not JSON' } });
    }
    send(200, scriptedCompletion(script, body, n++));
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(options.port, host, resolve));
  const { port } = server.address() as AddressInfo;
  return { server, baseUrl: `http://${host}:${port}/v1` };
}

/** Reads and checks a script file; the error names the file and each offending field. */
export function readScript(file: string): ScriptedModelScript {
  const parsed = ScriptedModelScript.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** `flywheel model serve-scripted`: the scripted model server in the foreground, until Ctrl-C. */
export function registerModelCommands(program: Command): void {
  const model = program.command('model').description('models to try Flywheel with');
  model
    .command('serve-scripted')
    .description('serve a scripted model over the OpenAI protocol (examples/quickstart/script.json: the walk-through\'s agent)')
    .option('--script <file>', 'the script: { tasks: [{ when: <phrase of the instruction>, steps: [{ tool, arguments } | { text }] }] }', 'examples/quickstart/script.json')
    .option('--port <port>', 'port to listen on (0 = a free one)', '8321')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .action(async (flags: { script: string; port: string; host: string }) => {
      const { server, baseUrl } = await serveScriptedModel(readScript(flags.script), { port: Number(flags.port), host: flags.host });
      process.stdout.write(`scripted model listening on ${baseUrl}\n  register it: flywheel checkpoint register scripted-1 --model scripted --serve openai:scripted@${baseUrl}\n`);
      const stop = () => server.close(() => process.exit(0));
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
}
