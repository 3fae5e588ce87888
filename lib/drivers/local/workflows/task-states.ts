/**
 * The Task states of a workflow definition, found by walking it (nested Map iterations and Parallel branches
 * included): the states the local driver gives a handler each, and the names tests zero the retry pauses of.
 *
 * @example
 * const zeroPauses = Object.fromEntries(taskStates(definition).map(([name]) => [name, 0]));
 */

type Node = Record<string, unknown>;

function isObject(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every Task state of a definition with its name, nested Map and Parallel states included. */
export function taskStates(definition: object): Array<[string, { Resource?: unknown }]> {
  const found: Array<[string, { Resource?: unknown }]> = [];
  const states = 'States' in definition && isObject(definition.States) ? definition.States : {};
  for (const [name, state] of Object.entries(states)) {
    if (!isObject(state)) continue;
    if (state['Type'] === 'Task') found.push([name, state]);
    const branches = Array.isArray(state['Branches']) ? state['Branches'] : [];
    for (const nested of [state['ItemProcessor'], state['Iterator'], ...branches]) {
      if (isObject(nested)) found.push(...taskStates(nested));
    }
  }
  return found;
}
