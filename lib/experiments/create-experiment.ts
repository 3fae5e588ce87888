/**
 * Creating an experiment: the definition validated (every issue with its path), its metric names resolved to declared
 * or built-in definitions, its arms' checkpoints found in the registry, its planned sample worked out by the power
 * calculation unless given, and the record stored as a `draft` with its `created` change.
 *
 * Idempotent by id: the same definition again answers the stored experiment (`created: false`); another definition
 * under a taken id is a `ConflictError` (409), so a retried create never changes what was approved.
 *
 * @example
 * const { record, created } = await createExperiment(ports, body, { kind: 'person', by: 'key:abc' });
 */
import type { z } from 'zod';
import { ConflictError, ValidationError } from '../errors.ts';
import type { Ports } from '../ports/ports.ts';
import { findCheckpoint } from '../registry/get-checkpoint.ts';
import type { FieldIssue } from '../shared/field-issues.ts';
import { parseInput } from '../shared/parse-input.ts';
import { unitsPerArm } from '../shared/statistics/index.ts';
import { createExperimentRecord } from './experiment-store.ts';
import { resolveMetricDefinitions } from './metric-definitions.ts';
import { ExperimentInput, type ExperimentDefinition, type ExperimentOriginSchema, type ExperimentRecord, type MetricDefinition } from './schemas.ts';

export type ExperimentOrigin = z.infer<typeof ExperimentOriginSchema>;

/**
 * Validates and stores a new experiment as a draft; see the file comment.
 *
 * @example
 * await createExperiment(ports, { id: 'exp-1', name: 'new policy', arms: [...], metrics: { primary: 'accepted' }, plannedUnitsPerArm: 2000 }, origin);
 */
export async function createExperiment(
  ports: Pick<Ports, 'records' | 'now'>,
  input: unknown,
  origin: ExperimentOrigin,
): Promise<{ record: ExperimentRecord; created: boolean }> {
  const definition = parseInput(ExperimentInput, input, 'experiment');
  const issues: FieldIssue[] = [];

  const refs = [
    { name: definition.metrics.primary, path: 'metrics.primary' },
    ...definition.metrics.secondary.map((name, i) => ({ name, path: `metrics.secondary[${i}]` })),
    ...definition.metrics.guardrails.map((g, i) => ({ name: g.metric, path: `metrics.guardrails[${i}].metric` })),
  ];
  let metrics: Map<string, MetricDefinition> | undefined;
  try {
    metrics = await resolveMetricDefinitions(ports.records, refs);
  } catch (error) {
    // Unknown metric names are reported together with unknown checkpoints: one answer names every field.
    if (!(error instanceof ValidationError)) throw error;
    issues.push(...error.issues);
  }

  const found = await Promise.all(definition.arms.map((a) => findCheckpoint(ports.records, a.checkpoint)));
  found.forEach((c, i) => {
    if (!c) issues.push({ path: `arms[${i}].checkpoint`, message: `no checkpoint ${definition.arms[i]!.checkpoint} in the registry` });
  });

  const primary = metrics?.get(definition.metrics.primary);
  const planned = plannedSample(definition, primary, issues);
  if (issues.length > 0) throw new ValidationError(`Invalid experiment: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);

  const record: ExperimentRecord = {
    definition,
    status: 'draft',
    plannedUnitsPerArm: planned!,
    rampStep: 0,
    stoppedArms: [],
    origin,
    createdAt: ports.now().toISOString(),
    revision: 0,
  };
  const by = origin.kind === 'person' ? origin.by : `training-run:${origin.runId}`;
  const result = await createExperimentRecord(ports.records, record, by, ports.now());
  if (!result.created && canonicalJson(result.record.definition) !== canonicalJson(definition)) {
    throw new ConflictError(`experiment ${definition.id} exists with another definition: choose another id`);
  }
  return result;
}

/**
 * Units per arm: as given, else from the power calculation on the primary metric (its kind decides the variance: a
 * binomial's from its mean, a mean's or a ratio's from `baselineSd`). The statistics module names the `power.*` field
 * that makes a design impossible; its issues are pushed with the others.
 */
function plannedSample(definition: ExperimentDefinition, primary: MetricDefinition | undefined, issues: FieldIssue[]): number | undefined {
  if (definition.plannedUnitsPerArm !== undefined) return definition.plannedUnitsPerArm;
  const power = definition.power;
  if (!power || !primary) return undefined; // the schema named a missing power; an unknown primary is named already
  try {
    return unitsPerArm({
      kind: primary.kind,
      mde: power.mde,
      alpha: power.alpha,
      power: power.power,
      baselineMean: power.baselineMean,
      ...(power.baselineSd !== undefined ? { baselineSd: power.baselineSd } : {}),
    });
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    issues.push(...error.issues);
    return undefined;
  }
}

/** JSON with object keys sorted: two definitions that differ only in key order are the same definition. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}
