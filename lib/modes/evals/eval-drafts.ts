/**
 * Reports and clusters into eval cases. A model drafts a judge-graded case (instruction, context, rubric, checks)
 * from the consented signals of a cluster or from a report; a person approves it, and it joins a private held-out
 * suite in the harness task format (`TASK#<suite>#<id>` records, a new suite version in the registry). Lineage both
 * ways: the task names the feedback events, reports and clusters it came from, and each mode's page lists the cases
 * made from it. Only signals with training consent are sent to the drafter or copied into a case.
 *
 * When the complaint is about behaviour rather than code (it ignored AGENTS.md, it did not ask before a risky step, it
 * kept overexplaining after a correction, it never reported back in chat, it mishandled an incident), the drafter may
 * give the case a `behaviour` (`lib/harness/task/behaviour-schema.ts`: scripted user turns, a simulated user, tools
 * that come and go, a fake chat workspace or incident service). It is validated against that schema (a bad one is
 * refused back to the drafter naming the field, like any other argument) and copied onto the task on approval.
 */
import { createHash } from 'node:crypto';
import { raiseNotice } from '../../people/notices/raise-notice.ts';
import { z } from 'zod';
import { toFieldIssues } from '../../shared/field-issues.ts';
import { TaskBehaviourSchema } from '../../harness/task/behaviour-schema.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import type { ModelsPort } from '../../ports/models.ts';
import type { Ports } from '../../ports/ports.ts';
import { clusterRecord, evalDraftRecord, type StoredEvalDraft } from '../record-codecs.ts';
import { modeKeys } from '../record-keys.ts';
import { loadSignalByKey, type Signal } from '../signal.ts';
import { readLabel } from '../write-label.ts';
import { CHECKS_GUIDANCE, historyCheckIssues } from './history-checks.ts';

export const DRAFT_TOOL = 'draft_eval_case';
export const DRAFT_MAX_ATTEMPTS = 3;
const MAX_SOURCES = 8;

export const DraftRequest = z
  .strictObject({ fromCluster: z.string().min(1).max(64).optional(), fromReport: z.string().min(1).max(128).optional() })
  .refine((r) => (r.fromCluster === undefined) !== (r.fromReport === undefined), { message: 'give exactly one of fromCluster, fromReport' });

const Drafted = z.strictObject({
  instruction: z.string().min(1).max(8000),
  context: z.string().max(16000).default(''),
  rubric: z.array(z.object({ criterion: z.string().min(1).max(2000), weight: z.number().positive().default(1) })).min(1).max(20),
  checks: z.array(z.string().min(1).max(2000)).max(20).default([]),
  behaviour: TaskBehaviourSchema.optional(),
});

/** The JSON Schema of `behaviour` the drafter is shown (the task schema's, as input). */
function behaviourParameters(): Record<string, unknown> {
  const { $schema: _s, ...schema } = z.toJSONSchema(TaskBehaviourSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    ...schema,
    description:
      'Optional. Only when the complaint is about how the agent behaves with people, tools or services: scripted userTurns (afterTurn n, or on an event: tool-call, service-call, submit, ask-user, no-tool-call), a simulatedUser (persona, goal), tools that are added or removed during the attempt, services (a chat workspace, a metrics and incident service) with their starting state.',
  };
}


function tool() {
  return {
    name: DRAFT_TOOL,
    description: 'Draft one judge-graded evaluation case that reproduces the complaint.',
    parameters: {
      type: 'object',
      required: ['instruction', 'context', 'rubric', 'checks'],
      properties: {
        instruction: { type: 'string', description: 'What the user asks the agent, as they would.' },
        context: { type: 'string', description: 'What the agent is given besides the repository (files, constraints, history).' },
        rubric: { type: 'array', items: { type: 'object', required: ['criterion'], properties: { criterion: { type: 'string' }, weight: { type: 'number' } } } },
        checks: { type: 'array', items: { type: 'string' }, description: `Shell commands that must exit 0 after the attempt. ${CHECKS_GUIDANCE}` },
        behaviour: behaviourParameters(),
      },
    },
  };
}

/**
 * The signals a draft is made from (consented, with text), the clusters it came from, and the modes those clusters
 * were promoted into (`promoted.mode` of a cluster record, `promote-cluster.ts`): a draft from a promoted cluster
 * names its mode in `lineage.modes` even before its members are relabelled.
 */
async function sourcesOf(ports: Pick<Ports, 'records'>, req: z.output<typeof DraftRequest>): Promise<{ signals: Signal[]; clusterIds: string[]; clusterModes: string[] }> {
  let keys: string[];
  const clusterIds: string[] = [];
  const clusterModes: string[] = [];
  if (req.fromCluster) {
    const key = modeKeys.cluster(req.fromCluster);
    const c = clusterRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
    if (!c) throw new NotFoundError(`No cluster ${req.fromCluster} (run GET /v1/clusters first)`);
    keys = c.signalKeys;
    clusterIds.push(req.fromCluster);
    if (c.promoted) clusterModes.push(c.promoted.mode);
  } else keys = [`report:${req.fromReport}`];
  const signals: Signal[] = [];
  for (const k of keys) {
    if (signals.length >= MAX_SOURCES) break;
    const s = await loadSignalByKey(ports, k);
    if (s && s.trainingConsent && s.text !== undefined) signals.push(s);
  }
  if (signals.length === 0) {
    if (req.fromReport && !(await loadSignalByKey(ports, keys[0]!))) throw new NotFoundError(`No report ${req.fromReport}`);
    throw new ValidationError('No source signal with training consent and text: nothing may be drafted from it', [{ path: req.fromCluster ? 'fromCluster' : 'fromReport', message: 'no consented signal' }]);
  }
  return { signals, clusterIds, clusterModes };
}

/**
 * @example
 * const draft = await draftEvalCase(ports, judge, { fromCluster: 'cl-3f2a…' }); // draft.status === 'pending'
 */
export async function draftEvalCase(ports: Pick<Ports, 'records' | 'now'>, model: ModelsPort, input: unknown) {
  const r = DraftRequest.safeParse(input ?? {});
  if (!r.success) throw new ValidationError('Invalid draft request', toFieldIssues(r.error.issues));
  const { signals, clusterIds, clusterModes } = await sourcesOf(ports, r.data);
  const modes = new Set<string>(clusterModes);
  for (const s of signals) for (const m of (await readLabel(ports, s.key))?.modes ?? []) modes.add(m.mode);
  const messages: Parameters<ModelsPort['chat']>[0]['messages'] = [
    {
      role: 'system',
      content:
        `You turn complaints about an AI coding agent into one evaluation case. Answer only by calling ${DRAFT_TOOL}. ` +
        'When the complaint is about how the agent deals with the user (corrections, clarifications, interruptions), with tools that appear or fail, or with chat and incident services, give the case a behaviour that recreates that situation; otherwise leave behaviour out. ' +
        CHECKS_GUIDANCE,
    },
    { role: 'user', content: `Failure modes: ${[...modes].join(', ') || 'unlabelled'}.\nComplaints:\n${signals.map((s, i) => `${i + 1}. ${s.text!.slice(0, 2000)}`).join('\n')}` },
  ];
  let drafted: z.output<typeof Drafted> | undefined;
  let problem = '';
  for (let attempt = 1; attempt <= DRAFT_MAX_ATTEMPTS && !drafted; attempt++) {
    const reply = await model.chat({ messages, tools: [tool()], sampling: { temperature: 0 }, returnTokens: false });
    const call = reply.message.toolCalls[0];
    const raw = call?.arguments ?? reply.message.content;
    try {
      const parsed = Drafted.safeParse(JSON.parse(raw));
      const history = parsed.success ? historyCheckIssues(parsed.data.checks) : [];
      if (parsed.success && history.length === 0) drafted = parsed.data;
      else if (parsed.success) problem = history.map((i) => `${i.path}: ${i.message}`).join('; ');
      else problem = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    } catch (e) {
      problem = `arguments are not JSON (${(e as Error).message})`;
    }
    if (!drafted) {
      messages.push({ role: 'assistant', content: reply.message.content, ...(call ? { toolCalls: [call] } : {}) });
      const fix = `Refused: ${problem}. Call ${DRAFT_TOOL} again with valid arguments.`;
      messages.push(call ? { role: 'tool', toolCallId: call.id, content: fix, isError: true } : { role: 'user', content: fix });
    }
  }
  if (!drafted) throw new ValidationError(`The model gave no valid draft after ${DRAFT_MAX_ATTEMPTS} attempts: ${problem}`, [{ path: 'model', message: problem }]);
  const createdAt = ports.now().toISOString();
  const id = `draft-${createHash('sha256').update(`${signals.map((s) => s.key).join(',')}|${createdAt}`).digest('hex').slice(0, 12)}`;
  const repoCtx = signals.map((s) => s.context).find((c) => typeof c?.repo === 'string' && typeof c?.commit === 'string');
  const draft: StoredEvalDraft = {
    id,
    status: 'pending',
    createdAt,
    drafter: model.id,
    ...drafted,
    lineage: {
      eventIds: signals.filter((s) => s.kind === 'feedback').map((s) => s.id),
      reportIds: signals.filter((s) => s.kind === 'report').map((s) => s.id),
      clusterIds,
      modes: [...modes],
    },
    ...(repoCtx ? { repo: { kind: 'git', url: String(repoCtx.repo), commit: String(repoCtx.commit) } } : {}),
  };
  await ports.records.put(evalDraftRecord.encode(draft));
  // A person decides whether the case joins the private suite: a decision notice with the approve button.
  await raiseNotice(ports, {
    dedupKey: `eval-draft:${id}`,
    kind: 'decision',
    severity: 'info',
    title: `Eval draft ${id}: ${drafted.instruction.replace(/\s+/g, ' ')}`.slice(0, 150),
    text: `Drafted by ${model.id} from ${signals.length} complaint(s) (${[...modes].join(', ') || 'unlabelled'}). Read it, then approve it into the private suite or leave it.`,
    source: { capability: 'modes' },
    link: `/failure-modes?draft=${encodeURIComponent(id)}`,
    actions: [{ id: 'approve', label: 'Approve into the suite', style: 'primary', operation: { kind: 'approve-eval-draft', draftId: id } }],
  }).catch(() => undefined); // the draft is stored: a notice that could not be raised never fails it
  return draft;
}

export async function listEvalDrafts(ports: Pick<Ports, 'records'>, query: Record<string, string | undefined>) {
  const status = query.status === 'approved' ? 'approved' : 'pending';
  const page = await ports.records.query({ index: 'gsi1', partition: modeKeys.drafts(status), descending: true, limit: 100 });
  return { items: page.items.map((item) => evalDraftRecord.decode(item)) };
}
