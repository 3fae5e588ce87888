/**
 * The subset of the Amazon States Language that both runtimes execute the same way (DESIGN.md, "One workflow
 * definition, two runtimes"): AWS Step Functions, and `aws-local-stepfunctions` in the local runtime.
 *
 * - JSONPath only: no JSONata (`QueryLanguage: JSONata`, `{% … %}` expressions, `Arguments`, `Output`) and no
 *   variables (`Assign`).
 * - No ItemReader / ResultWriter / ItemBatcher, no tolerated-failure fields (Distributed Map features the local
 *   runtime does not have; a shard's failure is caught inside its iteration instead).
 * - No heartbeats (`HeartbeatSeconds(Path)`), no `Credentials`.
 * - Task resources: Lambda invoke and Batch submitJob(.sync) only, the two the local driver dispatches.
 * - Every Task sets `TimeoutSeconds`: the local runtime's default is 60 s, Step Functions' is a year, so an unset
 *   timeout would mean two behaviours.
 *
 * `LocalWorkflows` refuses a definition that breaks it; `test/workflow/definitions.test.ts` holds every rendered
 * definition to it.
 *
 * @example
 * const violations = aslSubsetViolations(sweepDefinition(localSweepArns()));
 * if (violations.length > 0) throw new Error(violations.join('\n'));
 */

/** The Task resources the local workflows driver has handlers for. */
export const SUBSET_TASK_RESOURCES = [
  'arn:aws:states:::lambda:invoke',
  'arn:aws:states:::batch:submitJob.sync',
  'arn:aws:states:::batch:submitJob',
] as const;

const FORBIDDEN_FIELDS: Record<string, string> = {
  Arguments: 'JSONata (use Parameters)',
  Output: 'JSONata (use ResultSelector / OutputPath)',
  Assign: 'variables',
  ItemReader: 'Distributed Map ItemReader',
  ResultWriter: 'Distributed Map ResultWriter',
  ItemBatcher: 'Distributed Map ItemBatcher',
  ToleratedFailurePercentage: 'tolerated failures',
  ToleratedFailurePercentagePath: 'tolerated failures',
  ToleratedFailureCount: 'tolerated failures',
  ToleratedFailureCountPath: 'tolerated failures',
  HeartbeatSeconds: 'heartbeats',
  HeartbeatSecondsPath: 'heartbeats',
  Credentials: 'cross-account credentials',
};

type Node = Record<string, unknown>;

function isObject(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every violation of the subset, as `<path>: <what>`; empty when the definition is inside it. */
export function aslSubsetViolations(definition: unknown): string[] {
  const violations: string[] = [];
  if (!isObject(definition)) return ['(root): not an object'];
  walkMachine(definition, '', violations);
  walkStrings(definition, '', violations);
  return violations;
}

function walkMachine(machine: Node, path: string, violations: string[]): void {
  if (machine.QueryLanguage !== undefined && machine.QueryLanguage !== 'JSONPath') {
    violations.push(`${path || '(root)'}: QueryLanguage ${String(machine.QueryLanguage)} (JSONPath only)`);
  }
  const states = machine.States;
  if (!isObject(states)) {
    violations.push(`${path || '(root)'}: no States`);
    return;
  }
  for (const [name, state] of Object.entries(states)) {
    const at = `${path}States.${name}`;
    if (!isObject(state)) {
      violations.push(`${at}: not an object`);
      continue;
    }
    if (state.QueryLanguage !== undefined && state.QueryLanguage !== 'JSONPath') {
      violations.push(`${at}: QueryLanguage ${String(state.QueryLanguage)} (JSONPath only)`);
    }
    for (const [field, what] of Object.entries(FORBIDDEN_FIELDS)) {
      if (field in state) violations.push(`${at}: ${field} (${what} is outside the subset)`);
    }
    if (state.Type === 'Task') {
      const resource = state.Resource;
      if (typeof resource !== 'string' || !SUBSET_TASK_RESOURCES.some((known) => known === resource)) {
        violations.push(`${at}: Task resource ${JSON.stringify(resource)} (only ${SUBSET_TASK_RESOURCES.join(', ')})`);
      }
      if (typeof state.TimeoutSeconds !== 'number') violations.push(`${at}: Task without TimeoutSeconds (the runtimes' defaults differ)`);
    }
    for (const [field, nested] of [
      ['ItemProcessor', state.ItemProcessor],
      ['Iterator', state.Iterator],
    ] as const) {
      if (isObject(nested)) walkMachine(nested, `${at}.${field}.`, violations);
    }
    if (Array.isArray(state.Branches)) {
      state.Branches.forEach((branch, i) => {
        if (isObject(branch)) walkMachine(branch, `${at}.Branches[${i}].`, violations);
      });
    }
  }
}

/** JSONata expressions are strings wrapped in `{% %}`, wherever they sit. */
function walkStrings(value: unknown, path: string, violations: string[]): void {
  if (typeof value === 'string') {
    if (/^\s*\{%[\s\S]*%\}\s*$/.test(value)) violations.push(`${path}: JSONata expression ${value}`);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => walkStrings(v, `${path}[${i}]`, violations));
    return;
  }
  if (isObject(value)) for (const [k, v] of Object.entries(value)) walkStrings(v, path ? `${path}.${k}` : k, violations);
}
