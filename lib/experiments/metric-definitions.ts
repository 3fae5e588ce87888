/**
 * Metric definitions: how a metric is computed per unit and compared between arms (binomial, mean, ratio), which way
 * is good, and its display. Every tenant has the built-ins (`BUILT_IN_METRICS`); a team declares more with
 * `POST /v1/metric-definitions`. A declared definition has no versions: re-posting it with other words, direction or
 * display replaces it, but its `kind` is fixed once declared (analyses already read it that way), and a built-in's
 * name cannot be taken (409 for both).
 */
import { ConflictError, ValidationError } from '../errors.ts';
import type { Ports } from '../ports/ports.ts';
import type { RecordsPort } from '../ports/records.ts';
import type { FieldIssue } from '../shared/field-issues.ts';
import { parseInput } from '../shared/parse-input.ts';
import { metricDefinitionRecord } from './ingest/record-codecs.ts';
import { experimentKeys } from './record-keys.ts';
import { BUILT_IN_METRICS, MetricDefinitionInput, type MetricDefinition } from './schemas.ts';

const BUILT_INS: ReadonlyMap<string, MetricDefinition> = new Map(BUILT_IN_METRICS.map((d) => [d.name, d]));

async function readDeclared(records: RecordsPort, name: string): Promise<MetricDefinition | undefined> {
  const key = experimentKeys.metricDefinition(name);
  return metricDefinitionRecord.decodeIfPresent(await records.get(key.pk, key.sk));
}

/** The definition's fields that mean something (not when it was made): what decides "the same definition". */
function sameDefinition(a: MetricDefinition, b: MetricDefinition): boolean {
  const { createdAt: _a, builtIn: _ab, ...restA } = a;
  const { createdAt: _b, builtIn: _bb, ...restB } = b;
  return canonical(restA) === canonical(restB);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) : v,
  );
}

/**
 * The definitions of the names an experiment refers to: built-ins and declared ones. Throws `ValidationError` naming
 * every unknown name's `path` (`metrics.secondary[1]`).
 *
 * @example
 * const defs = await resolveMetricDefinitions(ports.records, [{ name: 'accepted', path: 'metrics.primary' }]);
 * defs.get('accepted')?.kind; // 'binomial'
 */
export async function resolveMetricDefinitions(records: RecordsPort, refs: Array<{ name: string; path: string }>): Promise<Map<string, MetricDefinition>> {
  const out = new Map<string, MetricDefinition>();
  const issues: FieldIssue[] = [];
  const declared = new Map<string, Promise<MetricDefinition | undefined>>();
  for (const { name } of refs) if (!BUILT_INS.has(name) && !declared.has(name)) declared.set(name, readDeclared(records, name));
  for (const { name, path } of refs) {
    const def = BUILT_INS.get(name) ?? (await declared.get(name));
    if (def) out.set(name, def);
    else issues.push({ path, message: `names no metric definition: ${name} is neither built in nor declared (POST /v1/metric-definitions)` });
  }
  if (issues.length > 0) throw new ValidationError(`Unknown metric: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  return out;
}

/**
 * Declares a metric (or re-declares it). `created` is true for a new name; re-posting the same definition changes
 * nothing. Throws `ValidationError` for a bad field, `ConflictError` for a built-in's name or a changed `kind`.
 *
 * @example
 * const { definition, created } = await putMetricDefinition(ports, { name: 'edits_kept', kind: 'mean', source: 'edits_kept', direction: 'increase' });
 */
export async function putMetricDefinition(ports: Pick<Ports, 'records' | 'now'>, input: unknown): Promise<{ definition: MetricDefinition; created: boolean }> {
  const parsed = parseInput(MetricDefinitionInput, input, 'metric definition');
  if (BUILT_INS.has(parsed.name)) throw new ConflictError(`${parsed.name} is a built-in metric: choose another name`);
  const definition: MetricDefinition = { ...parsed, createdAt: ports.now().toISOString() };
  const { written } = await ports.records.put(metricDefinitionRecord.encode(definition), { condition: { kind: 'absent' } });
  if (written) return { definition, created: true };
  const existing = await readDeclared(ports.records, parsed.name);
  if (!existing) {
    // Deleted between the two calls: declare it again.
    return putMetricDefinition(ports, input);
  }
  if (existing.kind !== definition.kind) {
    throw new ConflictError(`${parsed.name} is declared as a ${existing.kind} metric; its kind cannot change to ${definition.kind} (declare a new name)`);
  }
  if (sameDefinition(existing, definition)) return { definition: existing, created: false };
  // Versionless: the new words, direction or display replace the old, made when the name was first declared.
  const replaced: MetricDefinition = { ...definition, createdAt: existing.createdAt };
  await ports.records.put(metricDefinitionRecord.encode(replaced));
  return { definition: replaced, created: false };
}

/**
 * Every definition a tenant can name: the built-ins (`builtIn: true`) first, then the declared ones by name.
 *
 * @example
 * const defs = await listMetricDefinitions(ports.records); // [{ name: 'thumbs_up_rate', builtIn: true, … }, …]
 */
export async function listMetricDefinitions(records: RecordsPort): Promise<MetricDefinition[]> {
  const out: MetricDefinition[] = [...BUILT_IN_METRICS];
  let cursor: string | undefined;
  do {
    const page = await records.query({ index: 'gsi1', partition: experimentKeys.allMetricDefinitions, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) out.push(metricDefinitionRecord.decode(item));
    cursor = page.cursor;
  } while (cursor);
  return out;
}
