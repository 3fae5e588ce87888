import { ConflictError, ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { canonicalJson } from '../../shared/canonical-json.ts';
import { judgeIdentity, type JudgeDefinition, type JudgeRef } from '../judge-identity.ts';
import { AcceptanceRuleSchema, type AcceptanceRule } from '../schemas.ts';
import { judgeVersionRecord } from './record-codecs.ts';
import { HEAD_WRITE_ATTEMPTS, readHead, readVersion, withEffectiveStatus, writeHeadOver } from './judge-store.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { RegisterJudgeInputSchema, type JudgeVersionRecord } from './schemas.ts';

export interface RegisterJudgeResult {
  /** The version as stored (the existing one when this definition was registered before). */
  judge: JudgeVersionRecord;
  ref: JudgeRef;
  /** True when this call stored the version; false for the same definition registered again. */
  created: boolean;
  /** The acceptance rule that gates this judge's promotions. */
  acceptanceRule: AcceptanceRule;
}

/**
 * Registers a judge definition as a version of its name: the version is its identity's hash (model, prompt, rubric,
 * decoding, output schema, taxonomy version), so the same definition gives the same version (idempotent, `created:
 * false`) and any change gives a new one, stored in full with status `candidate`. `acceptanceRule` (optional, kept
 * per judge name; defaults of `AcceptanceRuleSchema` on first registration) sets the gate of later promotions.
 * A name keeps its kind: registering another kind under it is a `ValidationError` on `kind`.
 *
 * @example
 * const { ref, created } = await registerJudge(ports, { name: 'scope-judge', kind: 'rubric', model: 'openai:qwen@http://…', prompt, rubric });
 * // ref = { name: 'scope-judge', version: '3f2a9c0d1e2b' }; the same call again: created false, the same ref
 */
export async function registerJudge(ports: Pick<Ports, 'records' | 'now'>, input: unknown): Promise<RegisterJudgeResult> {
  const { acceptanceRule: ruleInput, by, ...definition } = parseInput(RegisterJudgeInputSchema, input, 'judge definition');
  const def: JudgeDefinition = definition;
  const identity = judgeIdentity(def);
  const ref = { name: identity.name, version: identity.version };
  const records = ports.records;
  const now = ports.now().toISOString();

  const before = await readHead(records, def.name);
  if (before && before.kind !== def.kind) {
    throw new ValidationError(`Judge ${def.name} is a ${before.kind} judge; register a ${def.kind} judge under another name`, [
      { path: 'kind', message: `must be ${before.kind}, the kind of judge ${def.name}` },
    ]);
  }

  const record: JudgeVersionRecord = {
    name: def.name,
    version: identity.version,
    status: 'candidate',
    identity,
    definition: def,
    registeredAt: now,
    ...(by ? { registeredBy: by } : {}),
  };
  const { written: created } = await records.put(judgeVersionRecord.encode(record), { condition: { kind: 'absent' } });
  const stored = created ? record : await readVersion(records, ref);
  if (!stored) throw new ConflictError(`Judge ${def.name}@${identity.version} was removed while it was being registered; register it again`);

  // The head: created with the first version, moved to the newest on each new one, its rule replaced when one is given.
  const rule = ruleInput ? AcceptanceRuleSchema.parse(ruleInput) : undefined;
  let head = before;
  for (let attempt = 1; ; attempt++) {
    const needsWrite = !head || created || (rule !== undefined && canonicalJson(rule) !== canonicalJson(head.acceptanceRule));
    if (!needsWrite) break;
    const next = head
      ? {
          ...head,
          acceptanceRule: rule ?? head.acceptanceRule,
          ...(created ? { latestVersion: identity.version, versions: head.versions + 1 } : {}),
          updatedAt: now,
        }
      : { name: def.name, kind: def.kind, acceptanceRule: rule ?? AcceptanceRuleSchema.parse({}), latestVersion: identity.version, versions: 1, createdAt: now, updatedAt: now };
    if (await writeHeadOver(records, head, next)) {
      head = await readHead(records, def.name);
      break;
    }
    if (attempt >= HEAD_WRITE_ATTEMPTS) throw new ConflictError(`Judge ${def.name} kept changing while it was being registered; try again`);
    head = await readHead(records, def.name);
    if (head && head.kind !== def.kind) throw new ValidationError(`Judge ${def.name} is a ${head.kind} judge`, [{ path: 'kind', message: `must be ${head.kind}` }]);
  }
  return { judge: withEffectiveStatus(stored, head), ref, created, acceptanceRule: head?.acceptanceRule ?? AcceptanceRuleSchema.parse({}) };
}
