import { z } from 'zod';
import type { ToolDefinition } from '../../ports/models.ts';
import type { SandboxSession } from '../sandbox/sandbox.ts';

/**
 * The agent's tools (Inspect AI's vocabulary: bash, a text editor split into read/write/edit, list, search, submit).
 * Each has a zod schema for its arguments; its JSON Schema is what the model sees. Every tool runs through the
 * SandboxSession, so the sandbox's isolation and limits apply to file access too.
 */
export interface ToolContext {
  sandbox: SandboxSession;
  /** Milliseconds one command may run (the smaller of the task's command limit and the attempt's time left). */
  timeoutMs: number;
}

export interface ToolOutcome {
  content: string;
  isError: boolean;
  truncated?: boolean;
  exitCode?: number | null;
  /** Set by `submit`: the attempt ends. */
  submitted?: { answer?: string };
  /** The sandbox command hit one of its limits. */
  limit?: string;
}

export interface AgentTool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  schema: S;
  /** Set on a fake service's tools (`lib/harness/services/`): each call is recorded as a `service.call` event. */
  service?: string;
  run(args: z.infer<S>, ctx: ToolContext): Promise<ToolOutcome>;
}

/** POSIX single-quote a string for bash. */
export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

const Path = z.string().min(1).describe('Path relative to the workspace root');

/** A sandbox command's result as a tool outcome (stdout, then stderr; the exit code or limit said last). */
export function execOutcome(r: { exitCode: number | null; stdout: string; stderr: string; truncated: boolean; limit?: string }): ToolOutcome {
  const parts = [r.stdout, r.stderr ? `[stderr]\n${r.stderr}` : ''].filter(Boolean);
  const tail = r.limit ? `\n[command stopped: ${r.limit} limit]` : r.exitCode !== 0 ? `\n[exit code ${r.exitCode}]` : '';
  return {
    content: parts.join('\n') + tail,
    isError: r.exitCode !== 0,
    truncated: r.truncated,
    exitCode: r.exitCode,
    ...(r.limit ? { limit: r.limit } : {}),
  };
}

async function readText(ctx: ToolContext, path: string): Promise<{ ok: true; text: string } | { ok: false; error: string }> {
  const r = await ctx.sandbox.exec(`cat -- ${shellQuote(path)}`, { timeoutMs: ctx.timeoutMs });
  if (r.exitCode !== 0) return { ok: false, error: r.stderr.trim() || `cannot read ${path}` };
  if (r.truncated) return { ok: false, error: `${path} is larger than the output limit; read it with bash (head/sed)` };
  return { ok: true, text: r.stdout };
}

async function writeText(ctx: ToolContext, path: string, text: string): Promise<ToolOutcome> {
  const q = shellQuote(path);
  const r = await ctx.sandbox.exec(`mkdir -p -- "$(dirname -- ${q})" && cat > ${q}`, { timeoutMs: ctx.timeoutMs, stdin: text });
  if (r.exitCode !== 0) return { content: r.stderr.trim() || `cannot write ${path}`, isError: true, exitCode: r.exitCode };
  return { content: `wrote ${Buffer.byteLength(text)} bytes to ${path}`, isError: false, exitCode: 0 };
}

export const bashTool: AgentTool = {
  name: 'bash',
  description: 'Run a bash command in the workspace and return its stdout and stderr.',
  schema: z.object({ command: z.string().min(1).describe('The command to run') }).strict(),
  async run(args: { command: string }, ctx) {
    return execOutcome(await ctx.sandbox.exec(args.command, { timeoutMs: ctx.timeoutMs }));
  },
} as AgentTool;

export const readFileTool: AgentTool = {
  name: 'read_file',
  description: 'Read a text file. Optional 1-based line range.',
  schema: z.object({ path: Path, startLine: z.number().int().min(1).optional(), endLine: z.number().int().min(1).optional() }).strict(),
  async run(args: { path: string; startLine?: number; endLine?: number }, ctx) {
    const r = await readText(ctx, args.path);
    if (!r.ok) return { content: r.error, isError: true };
    if (args.startLine === undefined && args.endLine === undefined) return { content: r.text, isError: false };
    const lines = r.text.split('\n');
    const from = (args.startLine ?? 1) - 1;
    return { content: lines.slice(from, args.endLine ?? lines.length).join('\n'), isError: false };
  },
} as AgentTool;

export const writeFileTool: AgentTool = {
  name: 'write_file',
  description: 'Create or overwrite a file with the given content.',
  schema: z.object({ path: Path, content: z.string() }).strict(),
  async run(args: { path: string; content: string }, ctx) {
    return writeText(ctx, args.path, args.content);
  },
} as AgentTool;

export const editTool: AgentTool = {
  name: 'edit',
  description: 'Replace one occurrence of oldString with newString in a file. oldString must occur exactly once.',
  schema: z.object({ path: Path, oldString: z.string().min(1), newString: z.string() }).strict(),
  async run(args: { path: string; oldString: string; newString: string }, ctx) {
    const r = await readText(ctx, args.path);
    if (!r.ok) return { content: r.error, isError: true };
    const first = r.text.indexOf(args.oldString);
    if (first < 0) return { content: `oldString not found in ${args.path}`, isError: true };
    if (r.text.indexOf(args.oldString, first + 1) >= 0) {
      const count = r.text.split(args.oldString).length - 1;
      return { content: `oldString occurs ${count} times in ${args.path}; include more context so it is unique`, isError: true };
    }
    const next = r.text.slice(0, first) + args.newString + r.text.slice(first + args.oldString.length);
    const w = await writeText(ctx, args.path, next);
    return w.isError ? w : { content: `edited ${args.path}`, isError: false, exitCode: 0 };
  },
} as AgentTool;

export const listTool: AgentTool = {
  name: 'list',
  description: 'List files under a directory (default the workspace root), to a depth (default 2). Skips .git.',
  schema: z.object({ path: Path.default('.'), depth: z.number().int().min(1).max(10).default(2) }).strict(),
  async run(args: { path: string; depth: number }, ctx) {
    return execOutcome(
      await ctx.sandbox.exec(`find ${shellQuote(args.path)} -mindepth 1 -maxdepth ${args.depth} -not -path '*/.git' -not -path '*/.git/*' | LC_ALL=C sort`, { timeoutMs: ctx.timeoutMs }),
    );
  },
} as AgentTool;

export const searchTool: AgentTool = {
  name: 'search',
  description: 'Search file contents for a regular expression (grep -rnE); returns path:line:text.',
  schema: z.object({ pattern: z.string().min(1), path: Path.default('.'), glob: z.string().optional().describe('Only files matching, e.g. *.ts') }).strict(),
  async run(args: { pattern: string; path: string; glob?: string }, ctx) {
    const include = args.glob ? ` --include=${shellQuote(args.glob)}` : '';
    const r = await ctx.sandbox.exec(`grep -rnE --exclude-dir=.git${include} -e ${shellQuote(args.pattern)} -- ${shellQuote(args.path)}`, { timeoutMs: ctx.timeoutMs });
    if (r.exitCode === 1) return { content: 'no matches', isError: false, exitCode: 1 };
    return execOutcome(r);
  },
} as AgentTool;

export const submitTool: AgentTool = {
  name: 'submit',
  description: 'Submit your work: the attempt ends and the workspace is graded.',
  schema: z.object({ answer: z.string().optional().describe('Optional short summary') }).strict(),
  async run(args: { answer?: string }) {
    return { content: 'submitted', isError: false, submitted: args.answer !== undefined ? { answer: args.answer } : {} };
  },
} as AgentTool;

export const DEFAULT_TOOLS: readonly AgentTool[] = [bashTool, readFileTool, writeFileTool, editTool, listTool, searchTool, submitTool];

/** The definitions the model sees (JSON Schema from each tool's zod schema). */
export function toolDefinitions(tools: readonly AgentTool[]): ToolDefinition[] {
  return tools.map((t) => {
    const { $schema: _s, ...parameters } = z.toJSONSchema(t.schema, { io: 'input' }) as Record<string, unknown>;
    return { name: t.name, description: t.description, parameters };
  });
}
